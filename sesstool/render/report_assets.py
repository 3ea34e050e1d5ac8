"""The report page's stylesheet and script, inlined into every page and pinned by hash in its
Content-Security-Policy (nothing else may load or run)."""

from __future__ import annotations

import base64
import hashlib

CSS = """
:root{--bg:#fbfbfa;--fg:#1d232a;--mut:#66707a;--line:#d8dce0;--turn:#c9d7ee;--step:#dfe8d2;
--tool:#4f7fc4;--err:#c2412d;--warn:#b7791f;--info:#3a7d7c;--open:#c2412d}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);
color:var(--fg)}
header{padding:14px 22px;border-bottom:1px solid var(--line);background:#fff}
h1{font-size:17px;margin:0 0 6px}h2{font-size:15px;margin:22px 0 8px}
main{padding:0 22px 40px;max-width:1400px}
code,pre,.addr{font:12px/1.4 ui-monospace,"DejaVu Sans Mono",monospace}
.meta{color:var(--mut);font-size:13px}
.verdict{display:inline-block;padding:2px 10px;border-radius:11px;font-weight:600;color:#fff;
text-transform:uppercase;letter-spacing:.04em;margin-right:8px}
.v-clean{background:#2f7d4a}.v-interrupted{background:var(--warn)}.v-torn{background:var(--err)}
.v-corrupt{background:#7a1d12}.v-unsupported{background:#555}
.note{background:#fff7e0;border:1px solid #ecd9a0;padding:6px 10px;border-radius:4px;margin:10px 0}
ol.findings{padding-left:22px}ol.findings li{margin:3px 0}
.sev{font-weight:600;text-transform:uppercase;font-size:11px;margin-right:4px}
.sev-error .sev{color:var(--err)}.sev-warning .sev{color:var(--warn)}.sev-info .sev{color:var(--info)}
.addr{color:var(--mut);margin-left:6px}
li:target,.msg:target{background:#fff2b3}
.tl-controls{margin:6px 0}.tl-controls button{font:inherit;font-size:12px;margin-right:4px}
.tl{width:100%;border:1px solid var(--line);background:#fff;border-radius:4px}
.tl text{font:10px ui-monospace,"DejaVu Sans Mono",monospace;fill:var(--fg);pointer-events:none}
.tl .lane-label{fill:var(--mut)}
.tl .turn{fill:var(--turn);stroke:#8ea6cf;cursor:zoom-in}
.tl .step{fill:var(--step);stroke:#9fb585}
.tl .tool{fill:var(--tool)}.tl .tool.error{fill:var(--err)}
.tl .bar.open,.tl .tool.open.error{fill:url(#hatch);stroke:var(--open);stroke-dasharray:3 2}
.tl .not-started{fill:#fff;stroke:var(--open);stroke-dasharray:1 2}
.tl .gap{fill:#eef0f2}.tl .crash{stroke:var(--err);stroke-width:2}
.tl .axis{stroke:var(--line)}
.tl .mark{stroke:#fff;stroke-width:1}.tl .mark.sev-error{fill:var(--err)}
.tl .mark.sev-warning{fill:var(--warn)}.tl .mark.sev-info{fill:var(--info)}
.legend span{margin-right:14px;font-size:12px;color:var(--mut)}
.msg{border:1px solid var(--line);border-radius:4px;margin:6px 0;background:#fff}
.msg>summary{padding:4px 10px;cursor:pointer;font-weight:600}
.msg .part{margin:0 10px 8px}
.part .kind{font-size:11px;color:var(--mut)}
.part pre{margin:2px 0;padding:6px 8px;background:#f4f5f6;border-radius:3px;white-space:pre-wrap;
overflow-wrap:anywhere}
.part pre.clamp{max-height:12em;overflow:hidden}
.role-user>summary{color:#1f5f99}.role-assistant>summary{color:#2f7d4a}.role-tool>summary{color:#8a5a00}
.result-error pre{border-left:3px solid var(--err)}
pre.closers{background:#f4f5f6;padding:8px;white-space:pre-wrap;overflow-wrap:anywhere}
"""

JS = """
(function(){
var svg=document.getElementById('timeline');if(!svg)return;
var W=+svg.getAttribute('data-width'),T0=+svg.getAttribute('data-t0'),T1=+svg.getAttribute('data-t1');
function lay(t0,t1){var k=W/Math.max(1,t1-t0);
svg.querySelectorAll('[data-s]').forEach(function(el){var s=+el.getAttribute('data-s');
var e=el.hasAttribute('data-e')?+el.getAttribute('data-e'):s;var x=(s-t0)*k;
if(el.tagName==='circle'){el.setAttribute('cx',x);}
else if(el.tagName==='line'){el.setAttribute('x1',x);el.setAttribute('x2',x);}
else if(el.tagName==='text'){el.setAttribute('x',x+2);if(el.hasAttribute('data-n'))
el.setAttribute('visibility',(e-s)*k>=6.2*(+el.getAttribute('data-n'))?'visible':'hidden');}
else{el.setAttribute('x',x);el.setAttribute('width',Math.max(0.6,(e-s)*k));}});
var z=document.getElementById('zoom-label');
if(z)z.textContent=(t0===T0&&t1===T1)?'whole session':'zoomed: '+((t1-t0)/1000).toFixed(3)+' s';}
svg.querySelectorAll('rect.turn').forEach(function(r){r.addEventListener('click',function(){
var s=+r.getAttribute('data-s'),e=+r.getAttribute('data-e');lay(s,Math.max(e,s+1));});});
var sel=document.getElementById('zoom-turn');
if(sel)sel.addEventListener('change',function(){var o=sel.options[sel.selectedIndex];
if(!o.value){lay(T0,T1);return;}var s=+o.getAttribute('data-s');
lay(s,Math.max(+o.getAttribute('data-e'),s+1));});
var all=document.getElementById('zoom-all');
if(all)all.addEventListener('click',function(){if(sel)sel.value='';lay(T0,T1);});
document.querySelectorAll('button.show-all').forEach(function(b){b.addEventListener('click',function(){
var p=document.getElementById(b.getAttribute('data-for'));if(p){p.classList.remove('clamp');b.remove();}});});
})();
"""


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# Nothing may load: no connections, no frames, no forms, no base; only this style and script
# (by hash) and inline SVG. A log string that slipped through escaping still could not run.
CSP = (
    "default-src 'none'; "
    f"style-src '{_hash(CSS)}'; "
    f"script-src '{_hash(JS)}'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)
