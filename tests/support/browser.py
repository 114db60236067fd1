"""A person's browser for tests: the machine's Debian chromium driven by Playwright.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (installed by ``make test``)
headless, with everything that would reach the network switched off. Console errors of every page are
collected so a test can assert the UI ran clean, and screenshots go to ``.assay/test-screenshots/<test>/``
(ignored by git, removed by ``make clean``; ``ASSAY_SCREENSHOTS`` points elsewhere) so a person can look at
what the test saw after it ran.
"""

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(
    os.environ.get("ASSAY_SCREENSHOTS") or Path(__file__).resolve().parents[2] / ".assay" / "test-screenshots"
)


@dataclass
class Browser:
    """One browser page plus what it logged; ``shot`` keeps a full-page screenshot under a test's folder."""

    page: object  # playwright.sync_api.Page (imported lazily: collecting tests must not need Playwright)
    folder: Path
    console_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)  # alert/confirm texts: a sign that injected script ran

    def shot(self, name: str) -> Path:
        path = self.folder / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


def skip_without_chromium() -> None:
    """Skip (with the reason) where the browser or Playwright is missing; ``make test`` installs both."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: `make test` installs it (apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is missing: pip install -e '.[dev]'")


NAVIGATION_TIMEOUT_MS = 120_000
EXPECT_TIMEOUT_MS = 20_000


@contextmanager
def chromium_page(name: str, *, width: int = 1400, height: int = 1300) -> Iterator[Browser]:
    """A fresh headless chromium page; screenshots land in ``SCREENSHOTS/<name>/``."""
    from playwright.sync_api import expect, sync_playwright

    skip_without_chromium()
    folder = SCREENSHOTS / name
    folder.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            # The suite runs two test files at once on two cores beside Prefect servers and flows: a page load
            # or a rendered list may take several times what it takes on a quiet machine. Waits end as soon
            # as the page is there, so longer limits cost a passing test nothing.
            context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
            expect.set_options(timeout=EXPECT_TIMEOUT_MS)
            page = context.new_page()
            session = Browser(page=page, folder=folder)
            page.on("console", lambda message: message.type == "error" and session.console_errors.append(message.text))
            page.on("pageerror", lambda error: session.console_errors.append(str(error)))
            page.on("dialog", lambda dialog: (session.dialogs.append(dialog.message), dialog.dismiss()))
            yield session
        finally:
            browser.close()


@pytest.fixture
def browser(request: pytest.FixtureRequest) -> Iterator[Browser]:
    """A chromium page for one test, its screenshots kept under the test's name."""
    with chromium_page(request.node.name) as session:
        yield session


def open_offline(session: Browser, path: Path) -> list[str]:
    """Open a local file with every non-file request refused, as a reader without network would see it; the
    returned list fills with the addresses the page tried to reach (a report must reach none)."""
    refused: list[str] = []

    def refuse(route: Any) -> None:
        refused.append(route.request.url)
        route.abort()

    session.page.route(lambda url: not url.startswith("file://"), refuse)
    session.page.goto(path.as_uri())
    return refused


def open_resume_dialog(session: Browser, ui: str, flow_run_id: str) -> object:
    """A paused run's review form, opened as a person does: the run's page, its menu, Resume."""
    page = session.page
    page.goto(f"{ui}/v2/runs/flow-run/{flow_run_id}")
    page.get_by_role("button", name="Open menu").first.click()
    page.get_by_role("menuitem", name="Resume").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Your name").wait_for()
    return dialog


def form_select(dialog: object, title: str) -> object:
    """The select of the review field whose title starts with ``title`` (accessible name "Select <title>")."""
    return dialog.get_by_role("button", name=re.compile("^Select " + re.escape(title)))


OPTION_ATTEMPTS = 3


def choose_option(session: Browser, dialog: object, title: str, option: str) -> None:
    """Open a review field's select, click ``option`` and check the select now shows it. A select or list that
    re-renders under the pointer ("element is not stable", then detached) is scrolled to and opened again, as
    a person would."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(1, OPTION_ATTEMPTS + 1):
        try:
            select = form_select(dialog, title)
            select.scroll_into_view_if_needed(timeout=15_000)
            select.click(timeout=15_000)
            session.page.get_by_role("option", name=option, exact=True).click(timeout=15_000)
            break
        except PlaywrightTimeout:
            if attempt == OPTION_ATTEMPTS:
                raise
            session.page.keyboard.press("Escape")
    assert form_select(dialog, title).inner_text().strip() == option


RESUME_WAIT_MS = 120_000
"""How long the form may take to close after Resume: the server validates the input and resumes the run, which
takes seconds when the test machine's cores are busy with other tests."""


def resume_as(session: Browser, dialog: object, reviewer: str, shot: str) -> None:
    """Type the reviewer's name, keep a screenshot of the filled form, press Resume and wait for it to close."""
    dialog.get_by_label("Your name").fill(reviewer)
    session.shot(shot)
    _press_until_closed(session, dialog, "Resume", shot)


def _press_until_closed(session: Browser, dialog: object, button: str, shot: str) -> None:
    """Press the dialog's ``button`` and wait for the dialog to close; a click that lands while the UI
    re-renders is lost, so it is pressed again, as a person would."""
    attempts = 3
    for attempt in range(1, attempts + 1):
        dialog.get_by_role("button", name=button, exact=True).click()
        try:
            dialog.wait_for(state="hidden", timeout=RESUME_WAIT_MS // attempts)
            return
        except Exception as error:
            if not dialog.is_visible():  # closed just after the wait gave up
                return
            if attempt < attempts:
                continue
            session.shot(f"{shot}-still-open")
            text = " ".join(dialog.inner_text().split())[-800:]
            raise AssertionError(f"the form did not close after {button}; it shows: ...{text}") from error


def run_form_field(page: object, label: str) -> object:
    """One parameter of the UI's Run form (its label, menu and value widgets), found by its exact label text,
    e.g. "corpus (Optional)"."""
    return page.get_by_text(label, exact=True).locator("xpath=../../..")


def toggle_choices(page: object, trigger: object, values: list[str]) -> None:
    """Choose (or un-choose, if chosen) each of ``values`` in a multi-select of a Run form (a list parameter
    whose items are choices, e.g. evaluator ids), as a person does: open it by ``trigger``, type the start of
    the id in the list's search box to narrow it, click the option, close the list."""
    from playwright.sync_api import expect

    for value in values:
        trigger.click()
        option = page.get_by_role("option", name=value, exact=True)
        search = page.get_by_placeholder(re.compile(r"^Search"))
        if search.count() and search.first.is_visible():
            search.first.fill(value)
        else:
            page.keyboard.type(value)
        option.click()
        page.keyboard.press("Escape")
        if option.is_visible():  # V1 keeps its list open: a click beside it closes it
            page.get_by_text("Parameters", exact=True).first.click()
        expect(option).to_be_hidden()


def v2_choices_trigger(field: object) -> object:
    """What opens a V2 multi-select: the "Select" button (the chosen ids are chips under it)."""
    return field.get_by_text("Select", exact=True)


def v1_choices_trigger(field: object) -> object:
    """What opens a V1 multi-select: the select button, which shows the chosen ids."""
    return field.locator(".p-select-button__control").first


# Prefect's default UI (V1, Vue, at the server's root). Its forms are "schema-form-property" blocks: a label
# whose text is the field's title (plus " (Optional)" when it has a default), the description drawn as
# Markdown (a field's paragraphs are text runs of one element, separated by spacer divs), then the widget. A
# select is a button showing its value beside a chevron; in Prefect 3.8 a click on the value toggles the list
# twice (the button and its wrapper both handle the click: it opens and closes at once), a click on the chevron
# opens it. Helpers for V2 (the "/v2/" UI) are above.
V1_PROPERTY = "contains(concat(' ', @class, ' '), ' schema-form-property ')"
V1_LABEL = "contains(concat(' ', @class, ' '), ' schema-form-property__label ')"


def _xpath_text(text: str) -> str:
    if "'" not in text:
        return f"'{text}'"
    return "concat(" + ', "\'", '.join(f"'{part}'" for part in text.split("'")) + ")"


def v1_field(scope: object, title: str, *, exact: bool = False) -> object:
    """The V1 form field (its label, description and widget) whose title starts with ``title`` (or is
    ``title`` with ``exact``), the innermost one when fields nest (a run form's object parameters)."""
    quoted = _xpath_text(title)
    test = f"normalize-space()={quoted}" if exact else f"starts-with(normalize-space(), {quoted})"
    return scope.locator(f"xpath=.//span[{V1_LABEL} and {test}]/ancestor::div[{V1_PROPERTY}][1]")


def v1_field_titles(scope: object) -> list[str]:
    """Every field title of a V1 form, as shown (" (Optional)" removed), in order."""
    texts = scope.locator(f"xpath=.//span[{V1_LABEL}]").all_inner_texts()
    return [" ".join(text.split()).removesuffix(" (Optional)") for text in texts]


def v1_select_value(scope: object, title: str) -> str:
    return v1_field(scope, title).locator(".p-select-button__value").inner_text().strip()


def v1_choose_option(session: Browser, scope: object, title: str, option: str) -> None:
    """Open a V1 select by its chevron, click ``option`` in the list and check the select now shows it. A list
    that closes or re-renders under the pointer is opened again, as a person would."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    field_ = v1_field(scope, title)
    for attempt in range(1, OPTION_ATTEMPTS + 1):
        try:
            chevron = field_.locator(".p-select-button__icon")
            chevron.scroll_into_view_if_needed(timeout=15_000)
            chevron.click(timeout=15_000)
            session.page.locator(".p-pop-over-content").get_by_role("option", name=option, exact=True).click(
                timeout=5_000
            )
            if v1_select_value(scope, title) == option:
                break
        except PlaywrightTimeout:
            if attempt == OPTION_ATTEMPTS:
                raise
        if session.page.locator(".p-pop-over-content").count():
            session.page.keyboard.press("Escape")
    assert v1_select_value(scope, title) == option


def v1_options(session: Browser, scope: object, title: str) -> list[str]:
    """The choices a V1 select offers, read by opening its list (and closing it again)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    chevron = v1_field(scope, title).locator(".p-select-button__icon")
    options = session.page.locator(".p-pop-over-content").get_by_role("option")
    for attempt in range(1, OPTION_ATTEMPTS + 1):
        try:
            chevron.scroll_into_view_if_needed(timeout=15_000)
            chevron.click(timeout=15_000)
            options.first.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            if attempt == OPTION_ATTEMPTS:
                raise
    texts = [" ".join(text.split()) for text in options.all_inner_texts()]
    session.page.keyboard.press("Escape")
    session.page.locator(".p-pop-over-content").wait_for(state="detached", timeout=5_000)
    return texts


def v1_open_resume_dialog(session: Browser, ui: str, flow_run_id: str) -> object:
    """A paused run's review form in V1, opened as a person does: the run's page, the Resume button at its top
    right, the "Resume Flow Run" modal. A page that has not caught up with the pause yet is reloaded."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = session.page
    page.goto(f"{ui}/runs/flow-run/{flow_run_id}")
    resume = page.get_by_role("button", name="Resume", exact=True)
    for attempt in range(1, OPTION_ATTEMPTS + 1):
        try:
            resume.click(timeout=20_000)
            break
        except PlaywrightTimeout:
            if attempt == OPTION_ATTEMPTS:
                raise
            page.reload()
    dialog = page.get_by_role("dialog").filter(has_text="Resume Flow Run")
    v1_field(dialog, "Your name", exact=True).locator("textarea").wait_for(timeout=30_000)
    return dialog


def v1_submit_as(session: Browser, dialog: object, reviewer: str, shot: str) -> None:
    """Type the reviewer's name, keep a screenshot, press the modal's Submit and wait for it to close."""
    name = v1_field(dialog, "Your name", exact=True).locator("textarea")
    name.scroll_into_view_if_needed()
    name.fill(reviewer)
    session.shot(shot)
    _press_until_closed(session, dialog, "Submit", shot)
