#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The HTML report looked at in a real browser (issue 29, "a report to send"): headless
//! Chromium loads the report `latscope report` writes, and a script added to a copy of it
//! reads back what the browser made of the page — the header's text (version, date, host,
//! command line, the input's SHA-256), whether any number cell wraps its unit onto a second
//! line, and whether any plot label falls outside its plot. Chromium is the oracle of both
//! the escaping (the text it parsed is the text latscope meant) and the layout.

mod common;

use common::Scratch;
use latscope_testkit::Need;
use std::path::{Path, PathBuf};
use std::process::Command;

fn sample(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("samples").join(rel)
}

/// What the page's script reports, as JSON in `<pre id="latscope-check">`.
const CHECK: &str = r#"<script>
const out = {};
const row = (what) => [...document.querySelectorAll("table.made tr")]
  .find((tr) => tr.querySelector("th").textContent === what)?.querySelector("td").textContent;
out.version = row("latscope"); out.date = row("date"); out.host = row("host"); out.command = row("command");
out.sha256 = document.querySelector("code.hash")?.textContent;
out.wrapped = [];
for (const td of document.querySelectorAll("td:not(.t)")) {
  const r = document.createRange(); r.selectNodeContents(td);
  const tops = new Set([...r.getClientRects()].map((q) => Math.round(q.top)));
  if (tops.size > 1) out.wrapped.push(td.textContent);
}
out.clipped = []; out.labels = 0;
for (const svg of document.querySelectorAll("svg")) {
  const box = svg.getBoundingClientRect();
  for (const t of svg.querySelectorAll("text")) {
    out.labels++;
    const b = t.getBoundingClientRect();
    if (b.left < box.left - 0.5 || b.right > box.right + 0.5 || b.top < box.top - 0.5 || b.bottom > box.bottom + 0.5)
      out.clipped.push(t.textContent);
  }
}
const pre = document.createElement("pre"); pre.id = "latscope-check";
pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
</script>"#;

fn chromium(args: &[&str]) -> std::process::Output {
    let out = Need::Chromium.output(
        Command::new("chromium")
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
            .args(args),
    );
    assert!(out.status.success(), "chromium {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[test]
#[cfg_attr(not(have_chromium), ignore = "needs chromium: apt-get install chromium")]
fn the_report_header_reads_right_and_nothing_wraps_or_is_clipped_in_chromium() {
    let dir = Scratch::new("report-browser");
    // A file name and a rule a shell and a page must both take literally.
    let input = dir.join("it's <b>&amp; one.dat");
    std::fs::copy(sample("ftrace/virtio_blk_direct_read.dat"), &input).unwrap();
    let rule = "io=block_rq_issue -> block_rq_complete by sector";
    let report = dir.join("report.html");
    let out = Command::new(env!("CARGO_BIN_EXE_latscope"))
        .arg("report")
        .arg(&input)
        .args(["--preset", "irq-handler", "--rule", rule, "-o"])
        .arg(&report)
        .env("SOURCE_DATE_EPOCH", "1764900000")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(!html.contains("<b>"), "an argument reached the page as markup");

    let checked = dir.join("checked.html");
    std::fs::write(&checked, html.replace("</body>", &format!("{CHECK}</body>"))).unwrap();
    let dom = String::from_utf8(chromium(&["--dump-dom", &url(&checked)]).stdout).unwrap();
    let json = dom
        .split("<pre id=\"latscope-check\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .unwrap_or_else(|| panic!("the check did not run: {dom}"));
    // The DOM is serialised as HTML: the JSON's `&`, `<` and `>` come back escaped.
    let json = json.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();

    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["date"], "2025-12-05T02:00:00Z");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(v["host"], host.trim());
    // The command line the browser shows is the request, quoted so a shell gives back the
    // same words.
    let command = v["command"].as_str().unwrap();
    let words: Vec<String> = command.split_whitespace().take(2).map(str::to_owned).collect();
    assert_eq!(words, ["latscope", "report"]);
    assert!(command.contains(&format!("\"{}\"", input.display())), "{command}");
    assert!(command.ends_with(&format!("--preset irq-handler --rule '{rule}'")), "{command}");
    // SHA-256 of the file's bytes, as `sha256sum` would print it (FIPS 180-4, computed by
    // the test on the bytes it copied).
    let sha = v["sha256"].as_str().unwrap();
    assert_eq!(sha.len(), 64, "{sha}");
    assert_eq!(sha, reference_sha256(&input));

    assert_eq!(v["wrapped"], serde_json::json!([]), "number cells wrapped in {}", report.display());
    assert!(v["labels"].as_u64().unwrap() > 10, "{v}");
    assert_eq!(v["clipped"], serde_json::json!([]), "labels outside their plots");

    // And a picture of it, for a person: the header and the first tables.
    let png = dir.join("report.png");
    chromium(&[&format!("--screenshot={}", png.display()), "--window-size=1400,900", &url(&report)]);
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 20_000, "{} bytes", bytes.len());
}

/// `sha256sum`'s digest of `path` (coreutils).
fn reference_sha256(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().expect("sha256sum (coreutils)");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap().to_owned()
}
