"""Documents the system under test answers from."""

from pydantic import Field

from assay.models.base import DomainModel, PersistedModel

DEFAULT_CHUNK_WORDS = 120
"""Words per corpus chunk, unless a run or a host file says otherwise (topic modeling, the sample RAG)."""


class Document(DomainModel):
    uri: str = Field(min_length=1, description="Stable identifier, e.g. a file name or URL.")
    title: str = ""
    text: str
    metadata: dict[str, str] = Field(default_factory=dict)


class Chunk(DomainModel):
    """A retrievable passage of a document."""

    doc_uri: str
    index: int = Field(ge=0, description="Position of the chunk within its document.")
    text: str

    @property
    def ref(self) -> str:
        """Stable reference used by generated test cases (``TestCase.sources``)."""
        return f"{self.doc_uri}#{self.index}"


class Corpus(PersistedModel):
    name: str
    documents: list[Document] = Field(default_factory=list)

    def document(self, uri: str) -> Document:
        for document in self.documents:
            if document.uri == uri:
                return document
        raise KeyError(f"corpus {self.name!r} has no document {uri!r}")
