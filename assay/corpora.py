"""Loading a corpus from a folder and cutting it into retrievable chunks."""

import io
from importlib import resources
from pathlib import Path

from assay.embeddings.sentences import split_sentences
from assay.formats.errors import read_bytes
from assay.models import Chunk, Corpus, Document

CORPUS_SUFFIXES = {".md", ".txt", ".pdf"}


def sample_data_path() -> Path:
    """The bundled Harbourline Bank sample: ``corpus/`` and ``suite.json``."""
    return Path(str(resources.files("assay") / "data" / "sample_bank"))


def load_corpus(folder: Path, name: str | None = None) -> Corpus:
    """Every .md/.txt/.pdf file under ``folder`` becomes a document whose URI is its relative path.

    A document that cannot be read as a plain file (a FIFO, a device, a broken link, one over the input size
    limit) is an error naming it rather than a hang or a silently smaller corpus.
    """
    if not folder.is_dir():
        raise FileNotFoundError(f"corpus folder {folder} does not exist")
    documents = []
    for path in sorted(folder.rglob("*")):
        if path.suffix.lower() not in CORPUS_SUFFIXES or path.is_dir():
            continue
        data = read_bytes(path)
        text = _pdf_text(path, data) if path.suffix.lower() == ".pdf" else _plain_text(path, data)
        first_line = text.lstrip().splitlines()[0] if text.strip() else ""
        title = first_line.lstrip("#").strip() if first_line.startswith("#") else path.stem
        documents.append(Document(uri=path.relative_to(folder).as_posix(), title=title, text=text))
    if not documents:
        raise ValueError(f"corpus folder {folder} has no .md, .txt or .pdf documents")
    return Corpus(name=name or folder.name, documents=documents)


def _plain_text(path: Path, data: bytes) -> str:
    """UTF-8 text with Windows and old Mac line ends made ``\\n``, as a text-mode read would, so paragraphs
    still split on blank lines."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error})") from error
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _pdf_text(path: Path, data: bytes) -> str:
    """The text layer of every page, pages separated by blank lines; scanned PDFs without text are refused."""
    from pypdf import PdfReader

    try:
        pages = [page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages]
    except Exception as error:  # pypdf raises many kinds (KeyError, TypeError...) on malformed files
        raise ValueError(f"{path}: unreadable PDF ({type(error).__name__}: {error})") from error
    text = "\n\n".join(page.strip() for page in pages if page.strip())
    if not text:
        raise ValueError(f"{path}: the PDF has no text layer (scanned pages need OCR first)")
    return text


def chunk_document(document: Document, max_words: int = 120) -> list[Chunk]:
    """Greedy packing of whole sentences, never across paragraph-less boundaries mid-sentence.

    Paragraphs stay together while they fit; a long paragraph is cut between sentences. The title line is
    prepended to each chunk so a retrieved chunk still says which document it is about.
    """
    paragraphs = [block.strip() for block in document.text.split("\n\n") if block.strip()]
    if paragraphs and paragraphs[0].startswith("#"):
        paragraphs = paragraphs[1:]
    pieces: list[str] = []
    for paragraph in paragraphs:
        if len(paragraph.split()) <= max_words:
            pieces.append(paragraph)
        else:
            pieces.extend(split_sentences(paragraph))
    chunks: list[str] = []
    current: list[str] = []
    for piece in pieces:
        if current and len(" ".join(current).split()) + len(piece.split()) > max_words:
            chunks.append("\n".join(current))
            current = []
        current.append(piece)
    if current:
        chunks.append("\n".join(current))
    prefix = f"{document.title}\n" if document.title else ""
    return [Chunk(doc_uri=document.uri, index=index, text=prefix + text) for index, text in enumerate(chunks)]


def chunk_corpus(corpus: Corpus, max_words: int = 120) -> list[Chunk]:
    return [chunk for document in corpus.documents for chunk in chunk_document(document, max_words)]
