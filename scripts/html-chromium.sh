#!/usr/bin/env bash
# `--html` in a real browser: headless Chromium opens a run's page and
#   1. logs no console error (a script error or a blocked load would be one);
#   2. shows, in the DOM it built, the summary numbers of the run's JSON (--format json);
#   3. draws the page, SVG charts included, to a screenshot that is not blank (the Okabe–Ito
#      colours of the chart's bars and the timeline are among its pixels);
#   4. redraws the timeline for the client the address picks (`#client=7&run=1`): the DOM
#      then shows that client's attempts, as many as the run's --trace has for it;
# and opens a sweep's page (`herd-sim sweep --html`), a boundary search's (`herd-sim
# boundary --html`), a phase diagram's (the same over two axes) and a tune's (`herd-sim tune
# --html`): no console error, their tables cell for cell the sweep's CSV and the searches' and
# the tune's JSON, their SVG charts drawn to a screenshot that is not blank.
#
#   scripts/html-chromium.sh          (CI=true installs chromium with apt-get when missing)
#
# HERD_SIM names the binary (default: target/release/herd-sim, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
herd=${HERD_SIM:-target/release/herd-sim}
[ -x "$herd" ] || cargo build --release --locked
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    if [ "${CI:-}" = true ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq chromium > /dev/null
        browser=$(command -v chromium)
    else
        echo "skipped: chromium is not installed (CI=true installs it)"
        exit 0
    fi
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run=(--clients 300 --strategy full-jitter,exponential --recover-at 3s)
"$herd" "${run[@]}" --html "$work/run.html" --out /dev/null
"$herd" "${run[@]}" --format json > "$work/run.json"
"$herd" "${run[@]}" --out /dev/null --trace "$work/attempts.jsonl"
sweep=(sweep --clients 10,100,1000 --strategy full-jitter,exponential --seeds 2)
"$herd" "${sweep[@]}" --html "$work/sweep.html" --out "$work/sweep.csv"
search=(boundary --config configs/collapse-spike.toml --axis spike-rate --range 40..120 --seeds 4 --tolerance 10% --quiet)
"$herd" "${search[@]}" --html "$work/boundary.html" --out "$work/boundary.json" --format json
plane=(boundary --config configs/collapse-spike.toml --axis spike-rate --range 40..120 --axis spike-duration --range 1s..15s
    --strategy naive --seeds 3 --tolerance 10% --max-runs 300 --quiet)
"$herd" "${plane[@]}" --html "$work/plane.html" --out "$work/plane.json" --format json
tune=(tune --config configs/tune/grpc-throttling.toml --chart-x amplification@down --chart-y goodput_pct@flaky --quiet)
"$herd" "${tune[@]}" --html "$work/tune.html" --out "$work/tune.json" --format json

chrome() {
    # The flags keep a closed network quiet: no background connection, no update check.
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$work/profile" --enable-logging=stderr --v=0 "$@"
}
chrome --dump-dom "file://$work/run.html" > "$work/dom.html" 2> "$work/console.txt"
chrome --dump-dom "file://$work/run.html#client=7&run=1" > "$work/picked.html" 2>> "$work/console.txt"
chrome --screenshot="$work/shot.png" --window-size=1200,2400 --hide-scrollbars \
    "file://$work/run.html" > /dev/null 2>> "$work/console.txt"
chrome --dump-dom "file://$work/sweep.html" > "$work/sweep-dom.html" 2> "$work/sweep-console.txt"
chrome --dump-dom "file://$work/boundary.html" > "$work/boundary-dom.html" 2>> "$work/sweep-console.txt"
chrome --screenshot="$work/boundary-shot.png" --window-size=1200,1600 --hide-scrollbars \
    "file://$work/boundary.html" > /dev/null 2>> "$work/sweep-console.txt"
chrome --screenshot="$work/sweep-shot.png" --window-size=1200,2400 --hide-scrollbars \
    "file://$work/sweep.html" > /dev/null 2>> "$work/sweep-console.txt"
chrome --dump-dom "file://$work/plane.html" > "$work/plane-dom.html" 2>> "$work/sweep-console.txt"
chrome --screenshot="$work/plane-shot.png" --window-size=1200,1600 --hide-scrollbars \
    "file://$work/plane.html" > /dev/null 2>> "$work/sweep-console.txt"
chrome --dump-dom "file://$work/tune.html" > "$work/tune-dom.html" 2>> "$work/sweep-console.txt"
chrome --screenshot="$work/tune-shot.png" --window-size=1200,1600 --hide-scrollbars \
    "file://$work/tune.html" > /dev/null 2>> "$work/sweep-console.txt"

python3 - "$work" <<'PY'
import csv, json, re, struct, sys, zlib
work = sys.argv[1]
fail = []
console = open(f"{work}/console.txt", encoding="utf-8", errors="replace").read()
errors = [l for l in console.splitlines() if "CONSOLE" in l or "Uncaught" in l]
if errors:
    fail.append("console messages:\n" + "\n".join(errors))

# 2. The summary in the DOM Chromium built is the JSON's, cell for cell.
dom = open(f"{work}/dom.html", encoding="utf-8").read()
results = json.load(open(f"{work}/run.json"))["results"]
table = dom.split('<table id="summary">')[1].split("</table>")[0]
rows = [re.findall(r'<td data-key="([^"]+)">([^<]*)</td>', r) for r in table.split("<tr>")[2:]]
if len(rows) != len(results):
    fail.append(f"{len(rows)} summary rows in the DOM, {len(results)} results in the JSON")
checked = 0
for row, result in zip(rows, results):
    for key, cell in row:
        value = result[key]
        expected = "-" if value is None else value if isinstance(value, str) else json.dumps(value)
        # json.dumps writes 1.0 as 1.0 and 14 as 14, as serde_json does.
        if cell != expected:
            fail.append(f"{key}: DOM {cell!r}, JSON {expected!r}")
        checked += 1
if checked < 20:
    fail.append(f"only {checked} summary cells found")
if '<p id="picker">' not in dom:
    fail.append("the script did not run: the picker is still hidden")

# 4. The picked client's attempts, as many as its trace lines.
picked = open(f"{work}/picked.html", encoding="utf-8").read()
lines = [json.loads(l) for l in open(f"{work}/attempts.jsonl")]
want = sum(1 for a in lines if a["client"] == 7 and a["run"] == 1)
shown = re.search(r'<p id="shown">client (\d+) of ([^:]+): (\d+) attempts</p>', picked)
first = re.search(r'<p id="shown">client (\d+) of ([^:]+): (\d+) attempts</p>', dom)
if not shown or shown.groups() != ("7", "exponential", str(want)):
    fail.append(f"picked timeline: {shown.groups() if shown else None}, want ('7', 'exponential', '{want}')")
if not first or first.group(1) != "0" or first.group(2) != "full-jitter":
    fail.append(f"first timeline: {first.groups() if first else None}")
rows_picked = picked.split('<div id="timeline"')[1].split("</div>")[0].count("<tr><td>")
if rows_picked != want:
    fail.append(f"picked timeline has {rows_picked} attempt rows, want {want}")

# 3. A screenshot is not blank: decode the PNG (8-bit RGB or RGBA) and count the pixels of
# the page's colours (every other pixel of every other row).
def sampled_colours(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, colour = ihdr[:4]
    channels = {2: 3, 6: 4}[colour]
    assert depth == 8, depth
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = {}
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1: line[i] = (line[i] + a) & 255
            elif kind == 2: line[i] = (line[i] + b) & 255
            elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 2 == 0:
            for x in range(0, stride, channels * 2):
                px = bytes(line[x:x + 3])
                colours[px] = colours.get(px, 0) + 1
        previous = line
    return width, height, colours

def not_blank(path, palette, what):
    width, height, colours = sampled_colours(path)
    for name, rgb in palette.items():
        if colours.get(rgb, 0) < 20:
            fail.append(f"the {what} screenshot has {colours.get(rgb, 0)} {name} pixels (sampled)")
    if len(colours) < 10:
        fail.append(f"the {what} screenshot has {len(colours)} colours: blank")
    return width, height, colours

palette = {"vermillion": bytes.fromhex("D55E00"), "blue": bytes.fromhex("0072B2"), "bluish green": bytes.fromhex("009E73")}
width, height, colours = not_blank(f"{work}/shot.png", palette, "run page's")

# The sweep's page: no console error, its table the CSV's cells, its charts drawn.
console = open(f"{work}/sweep-console.txt", encoding="utf-8", errors="replace").read()
errors = [l for l in console.splitlines() if "CONSOLE" in l or "Uncaught" in l]
if errors:
    fail.append("sweep page console messages:\n" + "\n".join(errors))
sweep_dom = open(f"{work}/sweep-dom.html", encoding="utf-8").read()
records = list(csv.DictReader(open(f"{work}/sweep.csv", newline="")))
table = sweep_dom.split('<table id="summary">')[1].split("</table>")[0]
rows = [re.findall(r'<td data-key="([^"]+)">([^<]*)</td>', r) for r in table.split("<tr>")[2:]]
if len(rows) != len(records):
    fail.append(f"{len(rows)} rows in the sweep page's DOM, {len(records)} in its CSV")
sweep_cells = 0
for row, record in zip(rows, records):
    for key, cell in row:
        if cell != record[key]:
            fail.append(f"sweep {key}: DOM {cell!r}, CSV {record[key]!r}")
        sweep_cells += 1
if sweep_cells < 100:
    fail.append(f"only {sweep_cells} sweep cells found")
charts = sweep_dom.count("<figure><svg")
if charts < 3:
    fail.append(f"the sweep page has {charts} charts, want 3 (peak, finish, waste)")
# The two strategies' lines: the palette's first two line colours.
not_blank(f"{work}/sweep-shot.png", {"blue": bytes.fromhex("0072B2"), "orange": bytes.fromhex("E69F00")}, "sweep page's")

# The boundary search's page: each case's figures and every point are the JSON's.
bdom = open(f"{work}/boundary-dom.html", encoding="utf-8").read()
bjson = json.load(open(f"{work}/boundary.json"))["results"]
def dom_rows(page, id):
    body = page.split(f'<table id="{id}">')[1].split("</table>")[0]
    return [re.findall(r'<td data-key="([^"]+)">([^<]*)</td>', r) for r in body.split("<tr>")[2:]]
def text(v):
    return "-" if v is None else v if isinstance(v, str) else json.dumps(v)
boundary_cells = 0
for (row, result) in zip(dom_rows(bdom, "summary"), bjson):
    for key, cell in row[1:]:
        if cell != text(result[key]):
            fail.append(f"boundary {key}: DOM {cell!r}, JSON {text(result[key])!r}")
        boundary_cells += 1
points = [p for r in bjson for p in r["points"]]
prow = dom_rows(bdom, "points")
if len(prow) != len(points):
    fail.append(f"{len(prow)} points in the boundary page's DOM, {len(points)} in its JSON")
for row, point in zip(prow, points):
    for key, cell in row[1:]:
        if cell != text(point[key]):
            fail.append(f"boundary point {key}: DOM {cell!r}, JSON {text(point[key])!r}")
        boundary_cells += 1
if boundary_cells < 20:
    fail.append(f"only {boundary_cells} boundary cells found")
not_blank(f"{work}/boundary-shot.png", {"blue": bytes.fromhex("0072B2"), "orange": bytes.fromhex("E69F00")}, "boundary page's")

# The phase diagram's page: each case's runs and stop, every cell (both values under the
# axes' names) and every contour square are the JSON's; the heat map drawn (the scale's blue
# at 0 and red at 1).
pdom = open(f"{work}/plane-dom.html", encoding="utf-8").read()
pjson = json.load(open(f"{work}/plane.json"))
names = [a["name"] for a in pjson["axes"]]
plane_cells = 0
def compare(what, rows, records, want):
    global plane_cells
    if len(rows) != len(records):
        fail.append(f"{len(rows)} {what} rows in the phase page's DOM, {len(records)} in its JSON")
    for row, record in zip(rows, records):
        for key, cell in row[1:]:
            if cell != want(record, key):
                fail.append(f"phase {what} {key}: DOM {cell!r}, JSON {want(record, key)!r}")
            plane_cells += 1
presults = pjson["results"]
compare("case", dom_rows(pdom, "summary"), presults,
        lambda r, key: str(len(r[key])) if key in ("cells", "contour") else text(r[key]))
compare("cell", dom_rows(pdom, "cells"), [c for r in presults for c in r["cells"]],
        lambda c, key: text(c["values"][names.index(key)] if key in names else c[key]))
def corner(q, key):
    end, name = key.split(" ", 1)
    return text(q[end][names.index(name)])
compare("contour", dom_rows(pdom, "contour"), [q for r in presults for q in r["contour"]], corner)
if plane_cells < 300:
    fail.append(f"only {plane_cells} phase page cells found")
not_blank(f"{work}/plane-shot.png", {"scale blue": bytes.fromhex("4575B4"), "scale red": bytes.fromhex("D73027")}, "phase page's")

# The tune's page: each frontier point's figures are the JSON's; the frontier drawn (blue
# points, the vermillion ring).
tdom = open(f"{work}/tune-dom.html", encoding="utf-8").read()
tjson = json.load(open(f"{work}/tune.json"))
def close(cell, v):
    if isinstance(v, str) or v is None:
        return cell == text(v)
    try:
        return abs(float(cell) - v) <= 1e-15 * max(abs(v), 1.0)
    except ValueError:
        return False
tune_cells = 0
trows = dom_rows(tdom, "summary")
if len(trows) != len(tjson["frontier"]):
    fail.append(f"{len(trows)} frontier rows in the tune page's DOM, {len(tjson['frontier'])} in its JSON")
for row, point in zip(trows, tjson["frontier"]):
    for key, cell in row:
        if key == "recommended":
            ok = cell == ("*" if point["params"] == tjson["recommended"] else "")
        elif key == "seeds":
            ok = close(cell, point["seeds"])
        elif key in point["params"]:
            ok = close(cell, point["params"][key])
        else:
            term, stat = key.rsplit(" ", 1)
            stats = point["objectives"].get(term)
            if stats is None:
                stats = next(s for c, s in point["constraints"].items() if c.startswith(term + " "))
            ok = close(cell, None if stats is None else stats[stat])
        if not ok:
            fail.append(f"tune {key}: DOM {cell!r} against the JSON")
        tune_cells += 1
if tune_cells < 20:
    fail.append(f"only {tune_cells} tune cells found")
chosen = ", ".join(f"{k}={v}" for k, v in sorted(tjson["recommended"].items()))
if f'<strong id="recommended">{chosen}</strong>' not in tdom:
    fail.append(f"the tune page does not recommend {chosen}")
not_blank(f"{work}/tune-shot.png", {"blue": bytes.fromhex("0072B2"), "vermillion": bytes.fromhex("D55E00")}, "tune page's")

if fail:
    print("html-chromium: FAILED\n" + "\n".join(fail))
    sys.exit(1)
print(f"html-chromium: {checked} summary cells equal the JSON's, client 7's {want} attempts shown when picked, "
      f"screenshot {width}x{height} with {len(colours)} colours, no console error; "
      f"the sweep's page: {sweep_cells} cells equal the CSV's, {charts} charts drawn; "
      f"the boundary page: {boundary_cells} cells equal the JSON's, its curve drawn; "
      f"the phase page: {plane_cells} cells equal the JSON's, its heat map drawn; "
      f"the tune page: {tune_cells} cells equal the JSON's, {chosen} recommended, its frontier drawn; no console error")
PY
