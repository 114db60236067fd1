"""Copy the browser tests' screenshots that the README and the docs show into ``docs/images/``.

The images are never made by hand: the browser tests (Playwright driving Debian chromium, ``tests/browser``)
save what they saw under ``.assay/test-screenshots/<test or page name>/``; this script copies the chosen ones,
downscales any wider than 1280 px, keeps at most the top 1000 px (a report's first screen), optimises each
below 300 KB, and writes into each PNG a text chunk ``Source`` (the test that took it and its screenshot) and
``Taken-by``, so anyone can check where it came from (``python -c "from PIL import Image;
print(Image.open('docs/images/report.png').text)"``).

    .venv/bin/python -m pytest tests/browser          # or `make test`: writes .assay/test-screenshots/
    .venv/bin/python docs/screenshots.py [--from FOLDER] [--out FOLDER]
"""

import argparse
import io
import sys
from pathlib import Path

from PIL import Image
from PIL.PngImagePlugin import PngInfo

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / ".assay" / "test-screenshots"
OUT = ROOT / "docs" / "images"
TAKEN_BY = "Playwright + Debian chromium in the browser tests"
MAX_WIDTH = 1280
MAX_HEIGHT = 1000
MAX_BYTES = 300_000

IMAGES: dict[str, tuple[str, str, str]] = {
    # image name: (screenshot folder, file name, the test that writes it)
    "review-form.png": (
        "test_review_forms_in_prefects_v1_ui",
        "3-calibration-1-labelled.png",
        "tests/browser/test_review_forms_v1.py::test_review_forms_in_prefects_v1_ui",
    ),
    "report.png": (
        "committee-report",
        "first-screen.png",
        "tests/browser/test_committee_report_browser.py::test_the_executive_summary_is_on_the_first_screen",
    ),
    "revalidation-verdict.png": (
        "test_production_revalidation_from_the_deployment_form_fails_on_a_regression",
        "2-artifact-revalidation-production-revalidation.png",
        "tests/browser/test_production_revalidation_run.py::"
        "test_production_revalidation_from_the_deployment_form_fails_on_a_regression",
    ),
}


def source_of(name: str) -> str:
    """The ``Source`` text of an image: ``<test node id>: .assay/test-screenshots/<folder>/<file>``."""
    folder, file, test = IMAGES[name]
    return f"{test}: .assay/test-screenshots/{folder}/{file}"


def encode(image: Image.Image, info: PngInfo) -> bytes:
    """The smallest of a lossless optimised PNG and, when that is too big, a 256-colour one."""
    buffer = io.BytesIO()
    image.save(buffer, "PNG", optimize=True, pnginfo=info)
    if buffer.tell() < MAX_BYTES:
        return buffer.getvalue()
    buffer = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        buffer, "PNG", optimize=True, pnginfo=info
    )
    return buffer.getvalue()


def convert(source: Path, target: Path, name: str) -> int:
    """Write ``source`` as ``target`` (scaled, cropped, optimised, tagged); its size in bytes."""
    with Image.open(source) as opened:
        image = opened.convert("RGB")
    if image.width > MAX_WIDTH:
        image = image.resize((MAX_WIDTH, round(image.height * MAX_WIDTH / image.width)), Image.Resampling.LANCZOS)
    if image.height > MAX_HEIGHT:
        image = image.crop((0, 0, image.width, MAX_HEIGHT))
    info = PngInfo()
    info.add_text("Source", source_of(name))
    info.add_text("Taken-by", TAKEN_BY)
    data = encode(image, info)
    if len(data) >= MAX_BYTES:
        raise SystemExit(f"{target.name}: {len(data)} bytes even with 256 colours (limit {MAX_BYTES})")
    target.write_bytes(data)
    return len(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="source", type=Path, default=SCREENSHOTS,
                        help="the browser tests' screenshot folder (default: .assay/test-screenshots)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=OUT, help="where the images go (default: docs/images)")
    args = parser.parse_args(argv)
    missing = [(name, args.source / folder / file, test) for name, (folder, file, test) in IMAGES.items()
               if not (args.source / folder / file).is_file()]  # fmt: skip
    if missing:
        for name, path, test in missing:
            print(f"{name}: the screenshot {path} is missing: run the browser test that takes it,\n"
                  f"    .venv/bin/python -m pytest {test}\n"
                  f"  (chromium and Playwright: `make test` installs them), then run this script again.",
                  file=sys.stderr)  # fmt: skip
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for name, (folder, file, _) in IMAGES.items():
        size = convert(args.source / folder / file, args.out / name, name)
        print(f"{args.out / name}: {size // 1024} KB from {folder}/{file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
