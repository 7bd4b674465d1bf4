"""What the browser refused on a page: every `securitypolicyviolation` event (the Content-Security-
Policy blocking a script, a style, a form's destination…) and every script error, collected from
each page a test opens, so a test can assert there were none."""
from __future__ import annotations

from dataclasses import dataclass, field

# Runs before any of the page's own scripts, in every frame (the browser's own injection, which the
# page's policy does not govern).
_LISTEN = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.recheckViolation({
    directive: event.effectiveDirective, blocked: event.blockedURI, source: event.sourceFile,
    line: event.lineNumber, sample: event.sample, page: document.location.href,
  });
});
"""


@dataclass
class Refusals:
    violations: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def watch_context(self, context) -> None:
        context.expose_binding("recheckViolation", lambda _source, violation: self.violations.append(violation))
        context.add_init_script(_LISTEN)
        context.on("page", self.watch_page)
        for page in context.pages:
            self.watch_page(page)

    def watch_page(self, page) -> None:
        page.on("pageerror", lambda error: self.errors.append(f"{page.url}: {error}"))
        # A resource that failed to load is kept by its address (the console does not name it).
        page.on("console", lambda message: message.type == "error"
                and not message.text.startswith("Failed to load resource")
                and self.errors.append(f"{page.url}: {message.text}"))
        page.on("response", lambda response: response.status >= 400 and self.failed.append(
            f"{response.status} {response.url}"
        ))

    def watch(self, browser) -> None:
        """Watch every context and page `browser` opens from now on."""
        new_context = browser.new_context

        def watched_context(*args, **kwargs):
            context = new_context(*args, **kwargs)
            self.watch_context(context)
            return context

        def watched_page(*args, **kwargs):
            return watched_context(*args, **kwargs).new_page()

        browser.new_context = watched_context
        browser.new_page = watched_page

    @property
    def csp(self) -> list:
        """The policy's refusals: its events, and the console's "Refused to …" lines."""
        return self.violations + [error for error in self.errors if "Content Security Policy" in error]
