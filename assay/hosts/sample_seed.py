"""The texts the sample RAG embeds over its packaged corpus, and the command that ships their vectors
(``assay/embeddings/seed.py``): ``python -m assay.hosts.sample_seed``."""

from collections.abc import Iterable, Iterator

from assay.corpora import chunk_corpus, load_corpus, sample_data_path
from assay.embeddings import PACKAGED_MODEL, EmbeddingEngine, split_sentences
from assay.embeddings.seed import SEED_FILE, write_seed
from assay.models.corpus import DEFAULT_CHUNK_WORDS


def seed_texts() -> list[str]:
    """The sample corpus's chunks at the default size (what the sample RAG indexes, and what an MRM run on the
    sample corpus models topics from) and the sentences of their bodies (what it scores), each once."""
    chunks = chunk_corpus(load_corpus(sample_data_path() / "corpus"), DEFAULT_CHUNK_WORDS)
    return list(dict.fromkeys(_texts_of(chunk.text for chunk in chunks)))


def _texts_of(chunks: Iterable[str]) -> Iterator[str]:
    for text in chunks:
        yield text
        yield from split_sentences(text.split("\n", 1)[-1])


def main() -> None:
    engine = EmbeddingEngine(PACKAGED_MODEL, backend="torch")
    texts = seed_texts()
    write_seed(engine.model_id, texts, engine.compute(texts))
    print(f"{SEED_FILE}: {len(texts)} texts, {SEED_FILE.stat().st_size // 1024} KB, model {engine.model_id}")


if __name__ == "__main__":
    main()
