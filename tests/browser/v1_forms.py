"""What the V1 browser tests share: reading an MRM review form in Prefect's default UI (V1, at the server's root)
as a person does, and checking the page ran clean.

A review form is the "Resume Flow Run" modal of a paused run: "How do you decide?" first, then (on a calibration
form) whether the metric is meaningful, then one field per item, then "Your name". ``open_review_form`` opens it,
tells which review it is by its items' titles, and checks that every item's title and evidence paragraphs are
drawn inside the modal once scrolled to and covered by nothing (``assert_visible``), in one call in the page.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.flows.review_forms import BULK_TITLE

from tests.support.browser import Browser, v1_field_titles, v1_open_resume_dialog, v1_options

# Known harmless failures of Prefect 3.8's V1 UI here: the tab icon it swaps per run state, asked for as
# "/ico/<state>.svg" although the package ships none for a paused run ("paused.svg") and none before the state
# is known ("undefined.svg"); and polls the browser aborts when the test goes to another page (net::ERR_ABORTED).
# Anything else failing is a finding.
HARMLESS_FAILURE = re.compile(r"^net::ERR_ABORTED |^404 http://127\.0\.0\.1:\d+/ico/(paused|undefined)\.svg$")
# Chromium notes each of those 404s in the console, and one more no page event shows: the "/favicon.ico" that
# V1's index.html links at the server's root (the server has it under /ico/ only).
CONSOLE_NOTES_OF_THOSE = {"Failed to load resource: the server responded with a status of 404 (Not Found)"}

TOPICS, CASES, CALIBRATION, CLUSTERS = "topics", "cases", "calibration", "clusters"
# A review is told by its items' titles: "1. Topic 3: ...", "1. Case <key>: ...", "1. <metric> says PASS
# (...)", "1. Name of cluster 2 (...)".
ITEM_TITLE = {
    TOPICS: re.compile(r"^\d+\. Topic \d+: "),
    CASES: re.compile(r"^\d+\. Case "),
    CALIBRATION: re.compile(r"^\d+\. .+ says (PASS|FAIL) \(([-\d.]+) (?:>=|<) ([-\d.]+)\), case "),
    CLUSTERS: re.compile(r"^\d+\. Name of cluster \d+ "),
}
# The description paragraphs that carry each item's evidence (V1 draws them as Markdown).
EVIDENCE = {
    TOPICS: ("Keywords: ", "Example chunk: "),
    CASES: ("Question: ", "Expected answer: "),
    CALIBRATION: ("Question: ", "Answer: ", "Verdict: "),
    CLUSTERS: ("Keywords: ", "Example questions: "),
}
# A calibration form opens with whether its metric is meaningful for this system.
MARKER = re.compile(r"^Is (.+) meaningful for this system\?$")
# The first field's sentences: which form this is, and what the proposals decide for the items not shown.
FORM_LINE, COUNTS_LINE = r" Form \d+: ", r"not shown|Every one of the|of this metric"


def watch_network(browser: Browser) -> list[str]:
    """Every request of the page that failed or got an error status, as 'STATUS URL'."""
    failures: list[str] = []
    browser.page.on("requestfailed", lambda request: failures.append(f"{request.failure} {request.url}"))
    browser.page.on("response", lambda response: response.status >= 400 and failures.append(
        f"{response.status} {response.url}"
    ))  # fmt: skip
    return failures


def assert_ran_clean(browser: Browser, failed_requests: list[str]) -> None:
    """No script ran from the page's texts, no request failed but the known harmless ones, no console error."""
    assert browser.dialogs == [], "text from the corpus or the answers ran as script"
    unexpected = [failure for failure in failed_requests if not HARMLESS_FAILURE.search(failure)]
    assert unexpected == [], f"requests of the UI failed: {unexpected}"
    errors = [error for error in browser.console_errors if error not in CONSOLE_NOTES_OF_THOSE]
    assert errors == [], f"console errors: {errors}"


def shot(browser: Browser, name: str) -> Path:
    """A screenshot of what the person sees (the viewport: V1 scrolls inside its own panes)."""
    path = browser.folder / f"{name}.png"
    browser.page.screenshot(path=str(path))
    return path


# Measures, in one call in the page, every wanted field of the open modal: for each field (by its title as shown,
# " (Optional)" removed) its title is scrolled into view and its box taken, then each wanted paragraph of its
# description (a text run matching one of the field's regular expressions) is scrolled into view and measured:
# its box, whether it lies inside the modal's scrolling pane, and whether it is what the browser hit-tests at its
# first characters (nothing covers it). One call per form, so every item is measured even on a loaded machine.
MEASURE_FIELDS = """(dialog, wanted) => {
  const body = dialog.querySelector('.p-modal__body') || dialog;
  let pane = body;
  while (pane && !(/(auto|scroll)/.test(getComputedStyle(pane).overflowY) && pane.scrollHeight > pane.clientHeight))
    pane = pane.parentElement;
  pane = pane || body;
  const within = (rect) => {
    const frame = pane.getBoundingClientRect();
    return rect.top >= frame.top - 1 && rect.bottom <= frame.bottom + 1 && rect.left >= frame.left - 1
      && rect.right <= frame.right + 1;
  };
  const measured = {};
  for (const field of dialog.querySelectorAll('.schema-form-property')) {
    const label = field.querySelector('.schema-form-property__label');
    if (!label) continue;
    const title = label.innerText.replace(/\\s+/g, ' ').trim().replace(/ \\(Optional\\)$/, '');
    const patterns = wanted[title];
    if (!patterns || title in measured) continue;
    label.scrollIntoView({block: 'center'});
    const box = label.getBoundingClientRect();
    const found = {};
    const description = field.querySelector('.schema-form-property__description');
    const walker = description ? document.createTreeWalker(description, NodeFilter.SHOW_TEXT) : null;
    for (let node = walker && walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent.replace(/^\\s+/, '');  // its end kept: markup split off leaves 'Question: '
      const pattern = patterns.find(p => !(p in found) && new RegExp(p).test(text));
      if (!pattern) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      node.parentElement.scrollIntoView({block: 'center'});
      const rect = range.getBoundingClientRect();
      const x = rect.left + Math.min(4, rect.width / 2), y = rect.top + Math.min(4, rect.height / 2);
      const hit = document.elementFromPoint(x, y);
      found[pattern] = {text: text.slice(0, 120), width: rect.width, height: rect.height, inside: within(rect),
                        uncovered: hit !== null && description.contains(hit)};
    }
    measured[title] = {title: {width: box.width, height: box.height, inside: within(box)}, paragraphs: found};
  }
  return measured;
}"""


def assert_visible(dialog: Any, wanted: dict[str, tuple[str, ...]]) -> dict[str, dict[str, str]]:
    """Every field of ``wanted`` (title -> paragraph patterns) has its title and those description paragraphs
    drawn (non-zero boxes) inside the modal once scrolled to, not covered; the paragraphs' texts by title."""
    measured = dialog.evaluate(MEASURE_FIELDS, {title: list(patterns) for title, patterns in wanted.items()})
    texts = {}
    for title, patterns in wanted.items():
        seen = measured.get(title)
        assert seen, f"no field titled {title!r} in the form (found {sorted(measured)[:5]}...)"
        box = seen["title"]
        assert box["width"] > 0 and box["height"] > 0 and box["inside"], f"the title {title!r} is not drawn: {box}"
        for pattern in patterns:
            paragraph = seen["paragraphs"].get(pattern)
            assert paragraph, f"{title!r}: no paragraph matching {pattern!r}"
            drawn = paragraph["width"] > 0 and paragraph["height"] > 0
            assert drawn and paragraph["inside"] and paragraph["uncovered"], (title, pattern, paragraph)
        texts[title] = {pattern: seen["paragraphs"][pattern]["text"] for pattern in patterns}
    return texts


@dataclass
class Form:
    """One open review form as the person reads it: which review, its item titles, the first field's lines."""

    review: str
    dialog: Any
    titles: list[str]
    counts: str  # the first field's sentence on what the proposals decide for the items not shown
    offered: list[str] = field(default_factory=list)  # the choices of "How do you decide?"
    marker: str = ""  # a calibration form's "Is <metric> meaningful for this system?"
    heading: str = ""  # the first field's "Form <n>: ..." line


def open_review_form(browser: Browser, ui: str, flow_run_id: str, number: int) -> Form:
    """The paused run's review form, opened in V1 (the run's page, Resume), with the visibility of everything a
    person decides on checked: every item's title and evidence, the first field's form and count lines, and a
    calibration form's "meaningful" question. ``number``: the pause's number, for the screenshots' names."""
    dialog = v1_open_resume_dialog(browser, ui, flow_run_id)
    titles = v1_field_titles(dialog)
    assert titles[0] == BULK_TITLE and titles[-1] == "Your name", titles
    items = titles[1:-1]
    marker = items.pop(0) if items and MARKER.match(items[0]) else ""
    (review,) = [name for name, pattern in ITEM_TITLE.items() if items and pattern.match(items[0])] or [None]
    assert review, f"pause {number}: no known review in the form's titles {titles}"
    assert all(ITEM_TITLE[review].match(title) for title in items), (review, items)
    shot(browser, f"{number}-{review}-opened")
    # every item the form shows: its title and evidence drawn, nothing covering them
    marked = {marker: ("labels below are then not used",)} if marker else {}
    texts = assert_visible(
        dialog, {BULK_TITLE: (FORM_LINE, COUNTS_LINE), **marked, **dict.fromkeys(items, EVIDENCE[review])}
    )
    first = texts[BULK_TITLE]
    shot(browser, f"{number}-{review}-last-item-evidence")
    offered = v1_options(browser, dialog, BULK_TITLE)
    return Form(review, dialog, items, first[COUNTS_LINE], offered, marker, first[FORM_LINE])


def verdicts_of(form: Form) -> dict[str, tuple[str, float]]:
    """A calibration form's answers: title -> (the metric's verdict, "pass"/"fail"; its score), read off titles."""
    verdicts = {}
    for title in form.titles:
        verdict, score, _ = ITEM_TITLE[CALIBRATION].match(title).groups()
        verdicts[title] = (verdict.lower(), float(score))
    return verdicts


def labels_one_answer_off(verdicts: dict[str, tuple[str, float]]) -> dict[str, str]:
    """A person's labels (title -> pass/fail) that a score cut separates, one answer off the metric's: the
    lowest passing answer failed (or, when only one passes, the highest failing one passed). Both kinds stay."""
    scores = sorted({score for _, score in verdicts.values()})
    passing = sorted(score for verdict, score in verdicts.values() if verdict == "pass")
    failing = sorted(score for verdict, score in verdicts.values() if verdict == "fail")
    assert passing and failing, f"the form should show both sides of the threshold: {verdicts}"
    # passes from the second-lowest passing answer up; with one passing, the highest failing one passes too
    cut = min(score for score in scores if score > passing[0]) if len(passing) > 1 else failing[-1]
    assert cut > min(scores), verdicts
    return {title: "pass" if score >= cut else "fail" for title, (_, score) in verdicts.items()}
