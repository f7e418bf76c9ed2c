/*! ccc docs app.3f9a2c.js | theme toggle, mobile menu, page filter, copy buttons | requires vendor/tinydom */
(function(w,d,T){"use strict";if(!T){w.console&&console.warn("ccc docs: tinydom missing, interactive features disabled");return}
var K="ccc-docs-theme",R=d.documentElement,M=w.matchMedia?w.matchMedia("(prefers-color-scheme: dark)"):null;
function sysTheme(){return M&&M.matches?"dark":"light"}
function applyTheme(t,save){var dk="dark"===t;R.setAttribute("data-theme",dk?"dark":"light");T.$$("[data-theme-toggle]").forEach(function(b){b.setAttribute("aria-pressed",String(dk));b.setAttribute("aria-label",dk?"Switch to light theme":"Switch to dark theme");b.title=b.getAttribute("aria-label");var i=T.$(".icon",b);i&&(i.className="icon "+(dk?"icon-sun":"icon-moon"))});save&&T.store.set(K,dk?"dark":"light");return dk?"dark":"light"}
function initTheme(){applyTheme(T.store.get(K,null)||sysTheme(),!1);T.$$("[data-theme-toggle]").forEach(function(b){T.on(b,"click",function(){applyTheme("dark"===R.getAttribute("data-theme")?"light":"dark",!0)})});M&&M.addEventListener&&M.addEventListener("change",function(){T.store.get(K,null)||applyTheme(sysTheme(),!1)})}
function initMenu(){T.$$("[data-menu-toggle]").forEach(function(b){var ids=(b.getAttribute("aria-controls")||"").split(/\s+/).filter(Boolean);T.on(b,"click",function(){var open="true"!==b.getAttribute("aria-expanded");b.setAttribute("aria-expanded",String(open));ids.forEach(function(id){var e=d.getElementById(id);e&&e.classList.toggle("open",open)})})})}
function norm(s){s=String(s||"").toLowerCase();return s.normalize?s.normalize("NFKD").replace(/[\u0300-\u036f]/g,""):s}
function tokens(q){return norm(q).split(/\s+/).filter(Boolean)}
function matches(text,tk){for(var i=0;i<tk.length;i++)if(text.indexOf(tk[i])<0)return!1;return!0}
function highlight(label,tk){var n=norm(label),m=[],o="",on=!1,i,j,k;if(!tk.length||n.length!==label.length)return T.escape(label);tk.forEach(function(t){for(i=n.indexOf(t);i>-1;i=n.indexOf(t,i+1))for(j=i;j<i+t.length;j++)m[j]=!0});for(k=0;k<label.length;k++){!!m[k]!==on&&(o+=(on=!!m[k])?"<mark>":"</mark>");o+=T.escape(label.charAt(k))}return on?o+"</mark>":o}
function syncUrl(v){if(!w.history||!w.history.replaceState||"function"!=typeof w.URL)return;try{var u=new URL(w.location.href);v?u.searchParams.set("q",v):u.searchParams.delete("q");w.history.replaceState(w.history.state,"",u.toString())}catch(e){}}
function initFilter(inp){var list=T.$(inp.getAttribute("data-filter")),cs=inp.getAttribute("data-filter-count"),cnt=cs?T.$(cs):null,items,empty,q;if(!list)return;
items=T.$$("li[data-item]",list).map(function(li){var lab=T.$("[data-label]",li)||li;return{li:li,lab:lab,raw:lab.textContent,text:norm(li.textContent+" "+(li.getAttribute("data-keywords")||""))}});
empty=T.el("li",{"class":"empty",hidden:"",text:inp.getAttribute("data-filter-empty")||"Nothing matches that search."});list.appendChild(empty);
function run(){var tk=tokens(inp.value),shown=0;items.forEach(function(it){var ok=matches(it.text,tk);it.li.hidden=!ok;ok&&(shown++,it.lab.innerHTML=highlight(it.raw,tk))});empty.hidden=shown>0;cnt&&(cnt.textContent=tk.length?shown+" of "+items.length:items.length+" total");syncUrl(inp.value.trim());return shown}
try{q=new URLSearchParams(w.location.search).get("q")}catch(e){q=null}q&&(inp.value=q);
T.on(inp,"input",T.debounce(run,80));T.on(inp,"keydown",function(e){"Escape"===e.key&&(inp.value="",run(),inp.blur())});T.on(inp,"search",run);run()}
function initKeys(){T.on(d,"keydown",function(e){var t=e.target,tag=t&&t.tagName,inp;if("/"!==e.key||e.metaKey||e.ctrlKey||e.altKey||"INPUT"===tag||"TEXTAREA"===tag||t&&t.isContentEditable)return;inp=T.$("input[data-filter]");inp&&(e.preventDefault(),inp.focus(),inp.select())})}
function initCopy(){T.$$(".prose pre").forEach(function(pre){var code=T.$("code",pre)||pre,ic=T.el("span",{"class":"icon icon-copy","aria-hidden":"true"}),b=T.el("button",{type:"button","class":"icon-button copy-button","aria-label":"Copy to clipboard",title:"Copy"},[ic]),tm;
T.on(b,"click",function(){var txt=code.textContent.replace(/^\$ /gm,"");if(!w.navigator.clipboard)return;w.navigator.clipboard.writeText(txt).then(function(){b.classList.add("copied");ic.className="icon icon-check";clearTimeout(tm);tm=setTimeout(function(){b.classList.remove("copied");ic.className="icon icon-copy"},1500)},function(){b.title="Copy failed"})});pre.appendChild(b)})}
function initYear(){T.$$("[data-year]").forEach(function(e){e.textContent=String((new Date).getFullYear())})}
w.cccDocs={normalize:norm,tokens:tokens,matches:matches,highlight:highlight,applyTheme:applyTheme};
T.ready(function(){initTheme();initMenu();T.$$("input[data-filter]").forEach(initFilter);initKeys();initCopy();initYear()})})(window,document,window.tinydom);
