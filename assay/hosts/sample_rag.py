"""Built-in sample RAG systems, so a demo and the tests need nothing external.

Both retrieve top-k chunks from a corpus and answer extractively with the retrieved sentences most relevant
to the question. ``sample-rag`` retrieves and ranks sentences by embeddings; ``sample-rag-keyword`` is
lexical throughout (BM25, keyword overlap), which misses paraphrases: a realistically weaker system, so
leaderboards compare two models out of the box.
Token counts are whitespace words (a local system has no tokenizer bill) and the cost is zero. Durations
are simulated, not timed: answers are computed in one batch per shard, whose wall time depends on the
machine and its load, and a timed share made two runs on the same inputs differ. Each answer reports the
time a hosted RAG system would take for the words it reads and writes (``simulated_duration``), so latency
still tells cases apart and is the same in every run.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from assay.corpora import chunk_corpus, load_corpus, sample_data_path
from assay.embeddings.sentences import split_sentences
from assay.hosts.base import Host, HostAnswer
from assay.hosts.retrievers import EmbeddingRetriever, KeywordRetriever, Retriever, keyword_tokens
from assay.models import Chunk, HostSetting, HostSpec, RetrievedChunk, TestCase
from assay.models.corpus import DEFAULT_CHUNK_WORDS

NOT_FOUND_ANSWER = "I could not find an answer to that question in the available documents."
REQUEST_SECONDS = 0.2
SECONDS_PER_WORD_READ = 0.0005
SECONDS_PER_WORD_WRITTEN = 0.02


def simulated_duration(words_read: int, words_written: int) -> float:
    """Seconds a hosted RAG system would take: a fixed request overhead, reading the prompt and retrieved
    chunks, and writing the answer at about 50 words a second."""
    return round(REQUEST_SECONDS + words_read * SECONDS_PER_WORD_READ + words_written * SECONDS_PER_WORD_WRITTEN, 6)


_SAMPLE_SETTINGS = [
    HostSetting(name="corpus", description="Folder of documents to answer from; default: the bundled corpus."),
    HostSetting(name="top_k", description="Chunks retrieved per question.", default=3),
    HostSetting(name="answer_sentences", description="Sentences in an answer at most.", default=2),
    HostSetting(name="chunk_words", description="Words per corpus chunk.", default=DEFAULT_CHUNK_WORDS),
]


class SampleRag(Host):
    spec: ClassVar[HostSpec] = HostSpec(
        id="sample-rag",
        display_name="Sample RAG (embedding retrieval)",
        description="Built-in sample RAG: embedding retrieval + extractive answer over a corpus.",
        model_type="rag",
        protocol="Python (in process)",
        settings=[
            *_SAMPLE_SETTINGS,
            HostSetting(name="min_similarity", description="Least sentence relevance to answer.", default=0.4),
        ],
        returns_context=True,
        returns_tokens=True,
        returns_cost=True,
    )
    defaults: ClassVar[dict[str, Any]] = {setting.name: setting.default for setting in spec.settings}

    def setting(self, name: str) -> Any:
        return self.config.settings.get(name, self.defaults[name])

    def make_retriever(self, chunks: Sequence[Chunk]) -> Retriever:
        return EmbeddingRetriever(chunks, self.embedder)

    def _load(self) -> None:
        if getattr(self, "_chunks", None) is not None:
            return
        folder = self.setting("corpus")
        corpus_path = Path(folder) if folder else sample_data_path() / "corpus"
        self._chunks = chunk_corpus(load_corpus(corpus_path), self.setting("chunk_words"))
        self._retriever = self.make_retriever(self._chunks)
        self._answers: dict[tuple[str, str], HostAnswer] = {}

    async def prepare(self, cases: Sequence[TestCase]) -> None:
        self._load()
        pending = [case for case in cases if (case.key, case.prompt) not in self._answers]
        if not pending:
            return
        questions = [case.prompt for case in pending]
        hits_per_case = self._retriever.search(questions, self.setting("top_k"))
        candidates = [self._sentences(hits) for hits in hits_per_case]
        relevance = self.score_sentences(
            questions, [[sentence for sentence, _ in group] for group in candidates]
        )
        for case, hits, sentences, scores in zip(pending, hits_per_case, candidates, relevance, strict=True):
            self._answers[case.key, case.prompt] = self._compose(case, hits, sentences, scores)

    def score_sentences(
        self, questions: Sequence[str], candidates: Sequence[Sequence[str]]
    ) -> list[np.ndarray]:
        """Cosine of each candidate sentence with its question; all texts embedded in one batch."""
        flat = [sentence for group in candidates for sentence in group]
        vectors = self.embedder.embed([*questions, *flat])
        question_vectors, sentence_vectors = vectors[: len(questions)], vectors[len(questions) :]
        scores, offset = [], 0
        for question_vector, group in zip(question_vectors, candidates, strict=True):
            scores.append(sentence_vectors[offset : offset + len(group)] @ question_vector)
            offset += len(group)
        return scores

    def _sentences(self, hits: list[tuple[int, float]]) -> list[tuple[str, int]]:
        """Candidate answer sentences of the retrieved chunks with their chunk rank, title lines left out."""
        seen: set[str] = set()
        sentences = []
        for rank, (index, _) in enumerate(hits):
            body = self._chunks[index].text.split("\n", 1)[-1]
            for sentence in split_sentences(body):
                if sentence not in seen:
                    seen.add(sentence)
                    sentences.append((sentence, rank))
        return sentences

    def _compose(
        self,
        case: TestCase,
        hits: list[tuple[int, float]],
        sentences: list[tuple[str, int]],
        similarity: np.ndarray,
    ) -> HostAnswer:
        context = [
            RetrievedChunk(
                text=self._chunks[index].text,
                doc_uri=self._chunks[index].doc_uri,
                rank=rank,
                score=round(score, 6),
            )
            for rank, (index, score) in enumerate(hits)
        ]
        order = np.argsort(-similarity, kind="stable")[: self.setting("answer_sentences")]
        chosen = sorted(i for i in order if similarity[i] >= self.setting("min_similarity"))
        answer = " ".join(sentences[i][0] for i in chosen) if chosen else NOT_FOUND_ANSWER
        prompt_words = len(case.prompt.split()) + sum(len(chunk.text.split()) for chunk in context)
        answer_words = len(answer.split())
        return HostAnswer(
            actual_output=answer,
            context=context,
            input_tokens=prompt_words,
            output_tokens=answer_words,
            cost=0.0,
            duration=simulated_duration(prompt_words, answer_words),
        )

    async def answer(self, case: TestCase) -> HostAnswer:
        self._load()
        if (case.key, case.prompt) not in self._answers:
            await self.prepare([case])
        return self._answers[case.key, case.prompt]


class SampleRagKeyword(SampleRag):
    """Lexical end to end: BM25 retrieval, and answer sentences chosen by keyword overlap with the question
    (share of the question's keywords a sentence contains), as a pre-embedding search system would."""

    spec: ClassVar[HostSpec] = SampleRag.spec.model_copy(
        update={
            "id": "sample-rag-keyword",
            "display_name": "Sample RAG (keyword retrieval)",
            "description": (
                "Built-in sample RAG, lexical: BM25 retrieval + keyword-overlap answers; a weaker baseline."
            ),
            "settings": [
                *_SAMPLE_SETTINGS,
                HostSetting(name="min_similarity", description="Least keyword overlap to answer.", default=0.2),
            ],
        }
    )
    defaults: ClassVar[dict[str, Any]] = {setting.name: setting.default for setting in spec.settings}

    def make_retriever(self, chunks: Sequence[Chunk]) -> Retriever:
        return KeywordRetriever(chunks)

    def score_sentences(
        self, questions: Sequence[str], candidates: Sequence[Sequence[str]]
    ) -> list[np.ndarray]:
        scores = []
        for question, group in zip(questions, candidates, strict=True):
            wanted = set(keyword_tokens(question))
            overlap = [
                len(wanted & set(keyword_tokens(sentence))) / max(len(wanted), 1) for sentence in group
            ]
            scores.append(np.array(overlap, dtype=np.float32))
        return scores
