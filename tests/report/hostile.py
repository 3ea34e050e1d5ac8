"""Hostile strings for the HTML and Markdown views: the suite's terminal escapes plus markup,
script and fence break-outs. Each script sets ``window.__pwned`` if it ever runs."""

from __future__ import annotations

from tests.adversarial.test_terminal_safety import EVIL

MARKUP = (
    "</script><script>window.__pwned=1</script>"
    '<img src=x onerror="window.__pwned=2">'
    "'\"><svg onload=window.__pwned=3>"
    '</title></text></svg><iframe src="javascript:window.__pwned=4"></iframe>'
    '<a href="https://example.invalid/x">link</a><link rel=stylesheet href="https://example.invalid/s.css">'
    "<style>body{background:url(https://example.invalid/b.png)}</style>"
    "\n```\n# injected heading\n````\n~~~\n"
    "]]>-->&lt;&amp;"
)
HOSTILE = EVIL + MARKUP
