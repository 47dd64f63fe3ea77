//! Reading an untrusted JUnit report (a pull request's artifact) for `report publish`:
//! UTF-8 only, parsed by quick-xml with a bounded element depth, no DOCTYPE, no entity
//! but XML's five and character references, one root that is `<testsuites>` or
//! `<testsuite>`. What it keeps is what the check run shows: the counts, and per failing
//! testcase its suite, name and failure text (each cut to a limit while reading, so
//! memory stays within the input's size). Nothing in the report is ever executed.
//!
//! A testcase fails when it has a `<failure>` or `<error>`, or only `<rerunFailure>` /
//! `<rerunError>` elements (Surefire's reruns without a final verdict); `<flakyFailure>`
//! beside a pass is a flake, which passed; `<skipped>` is skipped.

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

/// How much of an untrusted report is kept.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Elements nested deeper than this are refused (JUnit needs 5).
    pub max_depth: usize,
    /// A failure's text (message and body together) is cut to this many bytes.
    pub max_text: usize,
}

/// Which element made a testcase fail (the contract's `FailureKind` is replay's reason;
/// this is JUnit's element).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailedBy {
    Failure,
    Error,
    /// Only `<rerunFailure>`/`<rerunError>`: no attempt passed, no verdict element.
    Rerun,
}

/// One failing testcase.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failing {
    /// The innermost `<testsuite name>` (the family and shard), else the classname.
    pub suite: String,
    pub case: String,
    pub kind: FailedBy,
    /// The failure's `message`, a blank line and its text, cut to `Limits::max_text`.
    pub message: String,
    /// Whether `message` was cut.
    pub cut: bool,
}

/// The report's check run conclusion (the contract's `Verdict` is one replay's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conclusion {
    /// Every testcase passed (flakes included) and at least one ran.
    Success,
    /// A testcase failed, or the report has no testcase at all.
    Failure,
    /// Every testcase was skipped, or no GPU ran the GPU cases (compiled, not run; the
    /// stand-in runtime): never a pass.
    Neutral,
}

/// The counts and failing testcases of a report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Junit {
    pub suites: usize,
    pub passed: usize,
    /// Passed after a failed attempt (counted in `passed` too).
    pub flaky: usize,
    pub skipped: usize,
    pub failing: Vec<Failing>,
    /// Of `passed`: cases passed against the stand-in runtime (classname `FAMILY-stand-in`),
    /// which no GPU ran.
    pub stand_in: usize,
    /// Of `skipped`: GPU cases compiled, not run (`<skipped type="compiled-not-run">`).
    pub compiled_not_run: usize,
}

impl Junit {
    pub fn total(&self) -> usize {
        self.passed + self.skipped + self.failing.len()
    }

    pub fn conclusion(&self) -> Conclusion {
        if !self.failing.is_empty() || self.total() == 0 {
            Conclusion::Failure
        } else if self.passed == 0 || self.stand_in > 0 || self.compiled_not_run > 0 {
            // Without a GPU a run is never a success (issue 25: a stand-in merge was
            // published as "success ... 35 passed").
            Conclusion::Neutral
        } else {
            Conclusion::Success
        }
    }
}

/// Why a report was refused.
#[derive(Debug, thiserror::Error)]
pub enum JunitError {
    #[error("not UTF-8 (invalid byte at {0}): JUnit reports are read as UTF-8 only")]
    NotUtf8(usize),
    #[error("declares encoding `{0}`: JUnit reports are read as UTF-8 only")]
    Encoding(String),
    #[error("malformed XML at byte {position}: {source}")]
    Xml {
        position: u64,
        source: quick_xml::Error,
    },
    #[error("a DOCTYPE at byte {0}: a JUnit report has none (its entities are never expanded)")]
    DocType(u64),
    #[error("the entity `&{name};` at byte {position}: only XML's five and character references are read")]
    Entity { name: String, position: u64 },
    #[error("elements nested deeper than {limit} at byte {position}")]
    TooDeep { limit: usize, position: u64 },
    #[error("the root element is <{0}>, not <testsuites> or <testsuite>")]
    NotJunit(String),
    #[error("a second root element <{name}> at byte {position}")]
    SecondRoot { name: String, position: u64 },
    #[error("no root element: an empty document")]
    NoRoot,
    #[error("the document ends inside <{0}>")]
    Unclosed(String),
}

/// What an open element is, as far as the report goes.
#[derive(Debug)]
enum Open {
    Suite(String),
    Case,
    /// Text collects into the case's current failure.
    Failure,
    Other,
}

/// A failure element being read.
struct Text {
    kind: FailedBy,
    message: String,
    cut: bool,
    /// Whether the element's body has begun (after the message and a blank line).
    body: bool,
}

/// The testcase being read.
struct Case {
    suite: String,
    name: String,
    failure: Option<Text>,
    rerun: Option<Text>,
    skipped: bool,
    flaky: bool,
    /// Its classname names the stand-in runtime (`FAMILY-stand-in`).
    stand_in: bool,
    /// Skipped as compiled, not run.
    compiled_not_run: bool,
}

struct Parser {
    limits: Limits,
    stack: Vec<(String, Open)>,
    case: Option<Case>,
    /// The failure (or rerun) element whose text is being read.
    text: Option<Text>,
    seen_root: bool,
    out: Junit,
}

/// Appends at most what fits in `limit` bytes, on a character boundary.
fn push_capped(s: &mut String, cut: &mut bool, add: &str, limit: usize) {
    let room = limit.saturating_sub(s.len());
    if add.len() <= room {
        s.push_str(add);
    } else {
        let mut end = room;
        while !add.is_char_boundary(end) {
            end -= 1;
        }
        s.push_str(&add[..end]);
        *cut = true;
    }
}

fn local(e: &BytesStart<'_>) -> String {
    String::from_utf8_lossy(e.local_name().as_ref()).into_owned()
}

/// An attribute's value by local name; every attribute is checked (a duplicate or a bad
/// value anywhere in the tag is an error).
fn attr(e: &BytesStart<'_>, key: &str) -> Result<Option<String>, quick_xml::Error> {
    let mut found = None;
    for a in e.attributes() {
        let a = a?;
        if found.is_none() && a.key.local_name().as_ref() == key.as_bytes() {
            found = Some(a.normalized_value(XmlVersion::Implicit1_0)?.into_owned());
        }
    }
    Ok(found)
}

impl Parser {
    fn xml(&self, position: u64) -> impl Fn(quick_xml::Error) -> JunitError {
        move |source| JunitError::Xml { position, source }
    }

    fn suite(&self) -> Option<&str> {
        self.stack.iter().rev().find_map(|(_, o)| match o {
            Open::Suite(n) => Some(n.as_str()),
            _ => None,
        })
    }

    /// An element opens (`empty`: and closes at once).
    fn open(&mut self, e: &BytesStart<'_>, empty: bool, at: u64) -> Result<(), JunitError> {
        let name = local(e);
        if self.stack.is_empty() {
            if self.seen_root {
                return Err(JunitError::SecondRoot { name, position: at });
            }
            if name != "testsuites" && name != "testsuite" {
                return Err(JunitError::NotJunit(name));
            }
            self.seen_root = true;
        }
        if self.stack.len() >= self.limits.max_depth {
            return Err(JunitError::TooDeep {
                limit: self.limits.max_depth,
                position: at,
            });
        }
        let xml = self.xml(at);
        let open = match name.as_str() {
            "testsuite" => {
                self.out.suites += 1;
                Open::Suite(attr(e, "name").map_err(&xml)?.unwrap_or_default())
            }
            "testcase" if self.case.is_none() => {
                let case = attr(e, "name").map_err(&xml)?.unwrap_or_default();
                let classname = attr(e, "classname").map_err(&xml)?.unwrap_or_default();
                let suite = match self.suite() {
                    Some(s) if !s.is_empty() => s.to_string(),
                    _ => classname.clone(),
                };
                self.case = Some(Case {
                    suite,
                    name: case,
                    failure: None,
                    rerun: None,
                    skipped: false,
                    flaky: false,
                    stand_in: classname.ends_with("-stand-in"),
                    compiled_not_run: false,
                });
                Open::Case
            }
            "failure" | "error" | "rerunFailure" | "rerunError" if self.case.is_some() => {
                let kind = match name.as_str() {
                    "failure" => FailedBy::Failure,
                    "error" => FailedBy::Error,
                    _ => FailedBy::Rerun,
                };
                let mut t = Text {
                    kind,
                    message: String::new(),
                    cut: false,
                    body: false,
                };
                let m = attr(e, "message").map_err(&xml)?.unwrap_or_default();
                push_capped(&mut t.message, &mut t.cut, m.trim(), self.limits.max_text);
                self.text = Some(t);
                Open::Failure
            }
            "flakyFailure" | "flakyError" => {
                if let Some(c) = &mut self.case {
                    c.flaky = true;
                }
                Open::Other
            }
            "skipped" => {
                let kind = attr(e, "type").map_err(&xml)?;
                if let Some(c) = &mut self.case {
                    c.skipped = true;
                    c.compiled_not_run |= kind.as_deref() == Some("compiled-not-run");
                }
                Open::Other
            }
            _ => Open::Other,
        };
        self.stack.push((name, open));
        if empty {
            self.close();
        }
        Ok(())
    }

    /// The innermost element closes (quick-xml has checked that its name matches).
    fn close(&mut self) {
        let Some((_, open)) = self.stack.pop() else {
            return;
        };
        match open {
            Open::Failure => {
                if let (Some(mut t), Some(c)) = (self.text.take(), &mut self.case) {
                    t.message.truncate(t.message.trim_end().len());
                    let slot = if t.kind == FailedBy::Rerun {
                        &mut c.rerun
                    } else {
                        &mut c.failure
                    };
                    slot.get_or_insert(t);
                }
            }
            Open::Case => {
                if let Some(c) = self.case.take() {
                    self.finish(c);
                }
            }
            Open::Suite(_) | Open::Other => {}
        }
    }

    fn finish(&mut self, c: Case) {
        match c.failure.or(c.rerun) {
            Some(t) => self.out.failing.push(Failing {
                suite: c.suite,
                case: c.name,
                kind: t.kind,
                message: t.message,
                cut: t.cut,
            }),
            None if c.skipped => {
                self.out.skipped += 1;
                self.out.compiled_not_run += usize::from(c.compiled_not_run);
            }
            None => {
                self.out.passed += 1;
                self.out.flaky += usize::from(c.flaky);
                self.out.stand_in += usize::from(c.stand_in);
            }
        }
    }

    /// Character data inside a failure element; everything else is not kept.
    fn text(&mut self, s: &str) {
        if let Some(t) = &mut self.text {
            let limit = self.limits.max_text;
            if t.body {
                push_capped(&mut t.message, &mut t.cut, s, limit);
            } else if !s.trim().is_empty() {
                // The message attribute, a blank line, then the body.
                t.body = true;
                if !t.message.is_empty() {
                    push_capped(&mut t.message, &mut t.cut, "\n\n", limit);
                }
                push_capped(&mut t.message, &mut t.cut, s.trim_start(), limit);
            }
        }
    }
}

/// Reads a JUnit report from untrusted bytes.
pub fn parse(bytes: &[u8], limits: Limits) -> Result<Junit, JunitError> {
    let xml = std::str::from_utf8(bytes).map_err(|e| JunitError::NotUtf8(e.valid_up_to()))?;
    let mut reader = Reader::from_str(xml);
    let mut p = Parser {
        limits,
        stack: Vec::new(),
        case: None,
        text: None,
        seen_root: false,
        out: Junit::default(),
    };
    loop {
        let at = reader.buffer_position();
        let ev = reader.read_event().map_err(|source| JunitError::Xml {
            position: reader.error_position(),
            source,
        })?;
        let xml_err = p.xml(at);
        match ev {
            Event::Start(e) => p.open(&e, false, at)?,
            Event::Empty(e) => p.open(&e, true, at)?,
            Event::End(_) => p.close(),
            Event::Text(t) => p.text(&t.xml10_content().map_err(|e| xml_err(e.into()))?),
            Event::CData(t) => p.text(&t.xml10_content().map_err(|e| xml_err(e.into()))?),
            Event::GeneralRef(r) => {
                let ch = r.resolve_char_ref().map_err(&xml_err)?;
                let name = r.decode().map_err(|e| xml_err(e.into()))?;
                match ch {
                    Some(c) => p.text(c.encode_utf8(&mut [0; 4])),
                    None => match quick_xml::escape::resolve_predefined_entity(&name) {
                        Some(s) => p.text(s),
                        None => {
                            return Err(JunitError::Entity {
                                name: name.into_owned(),
                                position: at,
                            })
                        }
                    },
                }
            }
            Event::Decl(d) => {
                if let Some(enc) = d.encoding() {
                    let enc = enc.map_err(|e| xml_err(e.into()))?;
                    let enc = String::from_utf8_lossy(&enc).into_owned();
                    if !enc.eq_ignore_ascii_case("utf-8") && !enc.eq_ignore_ascii_case("utf8") {
                        return Err(JunitError::Encoding(enc));
                    }
                }
            }
            Event::DocType(_) => return Err(JunitError::DocType(at)),
            Event::Comment(_) | Event::PI(_) => {}
            Event::Eof => break,
        }
    }
    if let Some((name, _)) = p.stack.last() {
        return Err(JunitError::Unclosed(name.clone()));
    }
    if !p.seen_root {
        return Err(JunitError::NoRoot);
    }
    Ok(p.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_depth: 16,
        max_text: 64,
    };

    #[test]
    fn counts_and_failures_as_hrr_reports_writes_them() {
        let x = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="hrr-harness" tests="5" failures="1" errors="1">
  <testsuite name="hrr-sm90-shard-1-of-2" tests="5">
    <properties><property name="family" value="sm90"/></properties>
    <testcase name="big_copy" classname="sm90"/>
    <testcase name="d2h" classname="sm90"><failure type="check" message="d2h: seq 12 &lt;bad&gt;">attempt 1 (fail):&#10;  [FAIL] d2h</failure><rerunFailure message="again"/></testcase>
    <testcase name="crashy" classname="sm90"><error type="crash" message="SIGSEGV"/></testcase>
    <testcase name="flaky" classname="sm90"><flakyFailure message="once"/></testcase>
    <testcase name="off" classname="sm90"><skipped type="compiled-not-run"/></testcase>
    <testcase name="rr" classname="sm90"><rerunError message="crashed twice"><![CDATA[x<y]]></rerunError></testcase>
  </testsuite>
</testsuites>"#;
        let j = parse(x.as_bytes(), LIMITS).unwrap();
        assert_eq!((j.suites, j.passed, j.flaky, j.skipped), (1, 2, 1, 1));
        assert_eq!(j.conclusion(), Conclusion::Failure);
        let f = &j.failing;
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].suite, "hrr-sm90-shard-1-of-2");
        assert_eq!(f[0].case, "d2h");
        assert_eq!(f[0].kind, FailedBy::Failure);
        assert_eq!(
            f[0].message,
            "d2h: seq 12 <bad>\n\nattempt 1 (fail):\n  [FAIL] d2h"
        );
        assert_eq!(
            (f[1].kind, f[1].message.as_str()),
            (FailedBy::Error, "SIGSEGV")
        );
        assert_eq!(f[2].kind, FailedBy::Rerun);
        assert_eq!(f[2].message, "crashed twice\n\nx<y");
    }

    #[test]
    fn verdicts() {
        let skipped = r#"<testsuite name="s"><testcase name="a"><skipped/></testcase></testsuite>"#;
        assert_eq!(
            parse(skipped.as_bytes(), LIMITS).unwrap().conclusion(),
            Conclusion::Neutral
        );
        let passed = r#"<testsuite name="s"><testcase name="a"/><testcase name="b"><skipped/></testcase></testsuite>"#;
        assert_eq!(
            parse(passed.as_bytes(), LIMITS).unwrap().conclusion(),
            Conclusion::Success
        );
        let empty = r#"<testsuites/>"#;
        assert_eq!(
            parse(empty.as_bytes(), LIMITS).unwrap().conclusion(),
            Conclusion::Failure
        );
    }

    #[test]
    fn a_long_failure_is_cut_on_a_character_boundary() {
        let body = "é".repeat(100);
        let x = format!(
            r#"<testsuite name="s"><testcase name="a"><failure message="m">{body}</failure></testcase></testsuite>"#
        );
        let j = parse(x.as_bytes(), LIMITS).unwrap();
        let f = &j.failing[0];
        assert!(f.cut);
        assert!(
            f.message.len() <= 64 && f.message.len() >= 62,
            "{}",
            f.message.len()
        );
        assert!(f.message.starts_with("m\n\né"));
    }

    #[test]
    fn hostile_documents_are_refused() {
        let deep = format!("<testsuites>{}", "<a>".repeat(40));
        let cases: Vec<(&[u8], &str)> = vec![
            (b"", "no root element"),
            (b"<html/>", "the root element is <html>"),
            (b"<testsuites></testsuite>", "malformed XML"),
            (b"<testsuites><testsuite>", "ends inside <testsuite>"),
            (b"<testsuites/><testsuites/>", "a second root element"),
            (b"\xff<testsuites/>", "not UTF-8"),
            (
                br#"<?xml version="1.0" encoding="UTF-16"?><testsuites/>"#,
                "encoding `UTF-16`",
            ),
            (
                br#"<!DOCTYPE t [<!ENTITY a "aaaa">]><testsuites/>"#,
                "a DOCTYPE at byte 0",
            ),
            (
                b"<testsuite><testcase><failure>&a;</failure></testcase></testsuite>",
                "the entity `&a;`",
            ),
            (br#"<testsuite name="a" name="b"/>"#, "malformed XML"),
            (deep.as_bytes(), "nested deeper than 16"),
        ];
        for (doc, want) in cases {
            let e = parse(doc, LIMITS).unwrap_err().to_string();
            assert!(e.contains(want), "{}: {e}", String::from_utf8_lossy(doc));
        }
    }

    /// Without a GPU a report is never a success: cases passed against the stand-in
    /// runtime, or GPU cases compiled and not run beside a host case that passed, make it
    /// neutral (issue 25: both were published as success).
    #[test]
    fn stand_in_and_compile_only_reports_are_neutral_never_success() {
        let stand_in = r#"<testsuites><testsuite name="hrr-sm90">
<testcase name="a" classname="sm90-stand-in"/><testcase name="b" classname="sm90-stand-in"/>
</testsuite></testsuites>"#;
        let j = parse(stand_in.as_bytes(), LIMITS).unwrap();
        assert_eq!((j.passed, j.stand_in), (2, 2));
        assert_eq!(j.conclusion(), Conclusion::Neutral);
        let compiled = r#"<testsuites><testsuite name="hrr-sm90">
<testcase name="host" classname="sm90"/>
<testcase name="gpu" classname="sm90"><skipped type="compiled-not-run"/></testcase>
</testsuite></testsuites>"#;
        let j = parse(compiled.as_bytes(), LIMITS).unwrap();
        assert_eq!((j.passed, j.skipped, j.compiled_not_run), (1, 1, 1));
        assert_eq!(j.conclusion(), Conclusion::Neutral);
        let gpu = r#"<testsuites><testsuite name="hrr-sm90">
<testcase name="a" classname="sm90"/><testcase name="b" classname="sm90"><skipped type="skip"/></testcase>
</testsuite></testsuites>"#;
        assert_eq!(
            parse(gpu.as_bytes(), LIMITS).unwrap().conclusion(),
            Conclusion::Success
        );
    }
}
