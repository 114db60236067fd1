"""Sentence splitting time against text length: it must grow linearly.

Texts of 1,000 to 8,000 sentences (about 90 characters each, abbreviations and decimals included) on one
line, the worst case for pysbd, and on one line per sentence. Prints seconds per size and the ratio of the
8,000 to the 4,000 time (about 2 when linear, 4 when quadratic). ``--baseline`` also times pysbd on the
whole line, as ``split_sentences`` did before it segmented long lines in blocks (quadratic: minutes at 8,000).
"""

import argparse
import time
from collections.abc import Callable

from assay.embeddings.sentences import _segmenter, _split_cached

SENTENCE = "Dr. Smith raised the savings rate to 3.25% AER on Mon. at 9 a.m. and told customer no. {n} by letter. "
SIZES = (1_000, 2_000, 4_000, 8_000)


def text_of(sentences: int, separator: str) -> str:
    return separator.join(SENTENCE.format(n=index).strip() for index in range(sentences))


def seconds(split: Callable[[str], object], text: str) -> float:
    _split_cached.cache_clear()
    started = time.perf_counter()
    split(text)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", action="store_true", help="also time pysbd on the whole line (slow)")
    arguments = parser.parse_args()
    splitters: dict[str, Callable[[str], object]] = {"split_sentences": _split_cached}
    if arguments.baseline:
        splitters["pysbd whole line"] = lambda text: _segmenter().segment(text)
    for name, split in splitters.items():
        for layout, separator in (("one line", " "), ("many lines", "\n")):
            times = {size: seconds(split, text_of(size, separator)) for size in SIZES}
            cells = "  ".join(f"{size:>5,}: {value:6.2f}s" for size, value in times.items())
            print(f"{name:<16} {layout:<10} {cells}  ratio 8k/4k {times[8_000] / times[4_000]:.2f}", flush=True)


if __name__ == "__main__":
    main()
