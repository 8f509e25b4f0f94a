//! The flag reference, `docs/cli.md`, is generated from clap, as ripgrep generates its docs from
//! its flag definitions: the `--help` of `rollsim` and of every subcommand, found by walking the
//! "Commands:" sections, so that a new command is picked up. The test fails when the file drifts
//! from the binary; `ROLLSIM_UPDATE_DOCS=1 cargo test --release --test main docs::` writes it
//! instead (the one file in the repository a test may write, and only when asked).

use crate::common::*;
use std::path::PathBuf;

/// How to regenerate `docs/cli.md`, as the failure and the file say it.
const REGENERATE: &str = "ROLLSIM_UPDATE_DOCS=1 cargo test --release --test main docs::";

/// The terminal width the help is rendered at, whatever the caller's terminal (clap wraps help
/// at the terminal width when built to).
const COLUMNS: &str = "100";

/// The `--help` of `rollsim` followed by `args`, as plain text at a fixed width: `COLUMNS`
/// pinned, colour off (`CLICOLOR_FORCE` would colour even a pipe), trailing blanks trimmed from
/// every line so that editors and `git diff --check` leave the file alone. `caller` sets the
/// environment the test inherits first, to check that the pinning wins.
fn help_with(args: &[&str], caller: &[(&str, &str)]) -> String {
    let mut c = rollsim_command();
    for (k, v) in caller {
        c.env(k, v);
    }
    c.args(args)
        .arg("--help")
        .env("COLUMNS", COLUMNS)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("CLICOLOR");
    let out = c.output().expect("run rollsim");
    assert!(
        out.status.success(),
        "rollsim {} --help: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("help is UTF-8");
    let mut lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    while lines.last() == Some(&"") {
        lines.pop();
    }
    lines.join("\n")
}

fn help(args: &[&str]) -> String {
    help_with(args, &[])
}

/// The subcommands a help lists under "Commands:" (clap's own `help` left out): each is a line
/// indented by two spaces, its name first; deeper-indented lines continue a description.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every command line, `rollsim` first, each followed by its subcommands depth first, with its
/// help.
fn every_help() -> Vec<(Vec<String>, String)> {
    fn walk(path: Vec<String>, into: &mut Vec<(Vec<String>, String)>) {
        let args: Vec<&str> = path.iter().map(String::as_str).collect();
        let text = help(&args);
        let children = subcommands(&text);
        into.push((path.clone(), text));
        for child in children {
            let mut next = path.clone();
            next.push(child);
            walk(next, into);
        }
    }
    let mut all = Vec::new();
    walk(Vec::new(), &mut all);
    all
}

/// GitHub's anchor of a heading `rollsim 2048 play`: lower case, spaces as dashes.
fn anchor(command: &str) -> String {
    command.to_lowercase().replace(' ', "-")
}

/// `docs/cli.md`: a contents list, then each command's help in a fenced block under a heading.
fn render() -> String {
    let helps = every_help();
    let mut md = format!(
        "# rollsim's command line\n\n\
         Every command's `--help`, exactly as the binary prints it (at {COLUMNS} columns). \
         Generated\nby `tests/docs.rs` from clap's definitions in `src/`: do not edit by hand. \
         After changing a flag,\nregenerate it with\n\n```sh\n{REGENERATE}\n```\n\n\
         The user guide is the [README](../README.md).\n\n## Commands\n\n"
    );
    let name = |path: &[String]| {
        std::iter::once("rollsim")
            .chain(path.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for (path, _) in &helps {
        let command = name(path);
        let indent = "  ".repeat(path.len().saturating_sub(1));
        md.push_str(&format!("{indent}- [`{command}`](#{})\n", anchor(&command)));
    }
    for (path, text) in &helps {
        assert!(
            !text.contains("```") && !text.contains('\u{1b}'),
            "{}: help with a fence or an escape code",
            name(path)
        );
        md.push_str(&format!("\n## {}\n\n```text\n{text}\n```\n", name(path)));
    }
    md
}

fn cli_md() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md")
}

#[test]
fn cli_md_is_the_help_of_every_command() {
    let want = render();
    let path = cli_md();
    if std::env::var_os("ROLLSIM_UPDATE_DOCS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).expect("write docs/cli.md");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        let (line, (h, w)) = have
            .lines()
            .chain(std::iter::repeat(""))
            .zip(want.lines().chain(std::iter::repeat("")))
            .enumerate()
            .find(|(_, (h, w))| h != w)
            .unwrap_or((0, ("", "")));
        panic!(
            "docs/cli.md is not the binary's --help; regenerate it with\n    {REGENERATE}\n\
             first difference, line {}:\n  docs/cli.md: {h:?}\n  --help:      {w:?}",
            line + 1
        );
    }
}

#[test]
fn every_command_is_found_and_documented() {
    let commands: Vec<String> = every_help()
        .into_iter()
        .map(|(path, _)| path.join(" "))
        .collect();
    for known in [
        "",
        "2048",
        "2048 play",
        "2048 experiment",
        "bearoff",
        "bearoff build",
        "bearoff extract",
        "puzzle solve",
        "devices",
        "bench",
        "bench compare",
    ] {
        assert!(
            commands.iter().any(|c| c == known),
            "{known:?} in {commands:?}"
        );
    }
    assert!(
        !commands.iter().any(|c| c.ends_with("help")),
        "{commands:?}"
    );
}

#[test]
fn help_does_not_depend_on_the_callers_terminal() {
    // A narrow terminal and forced colour in the environment the test inherits change nothing.
    for args in [&["2048", "play"][..], &["bench"]] {
        let plain = help(args);
        let hostile = help_with(args, &[("COLUMNS", "40"), ("CLICOLOR_FORCE", "1")]);
        assert_eq!(plain, hostile, "{args:?}");
        assert_eq!(plain, help(args), "{args:?}: twice the same");
    }
}

#[test]
fn subcommands_are_read_from_the_commands_section() {
    let text = "Usage: rollsim bench [OPTIONS]\n\nCommands:\n  compare  Compare two records\n           \
                written by bench\n  help     Print this message\n\nOptions:\n  --quick  Fast\n";
    assert_eq!(subcommands(text), ["compare"]);
    assert!(subcommands("Usage: rollsim devices\n\nOptions:\n  --json\n").is_empty());
}
