//! An outside suite: the scripts of OpenAI Codex's bash splitting tests
//! (codex-rs/shell-command/src/bash.rs and core's exec_policy_tests.rs),
//! each with the commands Warden judges. Codex accepts only word-only
//! commands joined by `&&`, `||`, `;` and `|`; Warden splits more (file
//! redirections, `&`, `VAR=` prefixes, expansions in arguments) and judges
//! what is uncertain as such. Each difference is marked and listed in docs/src/shell/rules.md.

use warden_rules::{Layer, Split};

/// The commands a script is split into (wrappers left out), and whether any of it is unparsed.
fn split(script: &str) -> (Vec<String>, bool) {
    let split = Split::of_script(script);
    let commands = split.parts.iter().filter(|p| p.layer == Layer::Command).map(|p| p.command.shown()).collect();
    (commands, !split.unparsed.is_empty())
}

#[track_caller]
fn plain(script: &str, commands: &[&str]) {
    assert_eq!(split(script), (commands.iter().map(|c| c.to_string()).collect(), false), "{script:?}");
}

#[track_caller]
fn unparsed(script: &str) {
    assert!(split(script).1, "{script:?} was split as {:?}", split(script).0);
}

#[test]
fn codex_accepts_these_and_warden_splits_them_the_same() {
    plain("ls -1", &["ls -1"]);
    plain("ls && pwd; echo 'hi there' | wc -l", &["ls", "pwd", "echo 'hi there'", "wc -l"]);
    plain("echo \"hello world\"", &["echo 'hello world'"]);
    plain("echo 'hi there'", &["echo 'hi there'"]);
    plain("git commit -m \"line1\nline2\"", &["git commit -m 'line1\nline2'"]);
    plain("echo \"/usr\"'/'\"local\"/bin", &["echo /usr/local/bin"]);
    plain("echo '/usr'\"/\"'local'/bin", &["echo /usr/local/bin"]);
    plain("echo 123 456", &["echo 123 456"]);
    // A quoted glob is a literal word.
    plain("rg -n \"foo\" -g\"*.py\"", &["rg -n foo '-g*.py'"]);
    plain("grep -n 'pattern' -g'*.txt'", &["grep -n pattern '-g*.txt'"]);
}

#[test]
fn codex_rejects_these_and_warden_leaves_them_unparsed() {
    for script in [
        "(ls)",
        "ls || (pwd && echo hi)",
        "echo $(pwd)",
        "echo `pwd`",
        "ls &&",
        "&& ls",
        "ls ;; pwd",
        "ls | | wc",
        "rg -g\"$(pwd)\" pattern",
        "rg -g\"$(echo '*.py')\" pattern",
        "python3 <<< \"$(rm -rf /)\"",
    ] {
        unparsed(script);
    }
}

/// Differences: Codex rejects each of these; Warden splits them, and what
/// only the running shell knows is an unknown word (never allowed by an
/// allow rule, asked about by the rules that may match).
#[test]
fn codex_rejects_these_but_warden_splits_them() {
    // An expansion in an argument: the word is unknown, the command known.
    assert_eq!(split("echo $HOME"), (vec!["echo $HOME".to_owned()], false));
    assert_eq!(split("echo \"hi ${USER}\""), (vec!["echo \"hi ${USER}\"".to_owned()], false));
    assert_eq!(split("rg -g\"$VAR\" pattern"), (vec!["rg -g\"$VAR\" pattern".to_owned()], false));
    // A redirection to a file, and a command in the background.
    assert_eq!(split("ls > out.txt"), (vec!["ls".to_owned()], false));
    assert_eq!(split("echo hi & echo bye"), (vec!["echo hi".to_owned(), "echo bye".to_owned()], false));
    // A `VAR=` prefix is seen through (PATH, LD_* and the like make the program uncertain).
    assert_eq!(split("FOO=bar ls"), (vec!["ls".to_owned()], false));
}

/// Codex's heredoc fallback reduces `python3 <<'PY' ... PY` to `python3`;
/// Warden leaves an interpreter that reads its program from standard input
/// unparsed (a difference), and a heredoc fed to `cat` is plain.
#[test]
fn heredocs() {
    unparsed("python3 <<'PY'\nprint('hello')\nPY");
    unparsed("python3 << PY\nprint('hello')\nPY");
    plain("cat <<'EOF' > /some/important/folder/test.txt\nhello world\nEOF", &["cat"]);
    plain("echo hello > /tmp/out.txt && cat /tmp/out.txt", &["echo hello", "cat /tmp/out.txt"]);
    // `<<` in arithmetic is no heredoc.
    assert_eq!(split("echo $((1<<2))").0, ["echo $((1<<2))"]);
}

/// Codex's heredoc bypass: `PATH=/tmp/evil:$PATH cat <<'EOF'` must not count as the allowed `cat`.
#[test]
fn a_path_prefix_makes_the_program_uncertain() {
    let split = Split::of_script("PATH=/tmp/evil:$PATH cat <<'EOF'\nhello\nEOF");
    let cat = &split.parts[0].command;
    assert_eq!((cat.shown(), cat.program_uncertain), ("cat".to_owned(), true));
}

#[test]
fn shells_given_a_script_in_codex_forms() {
    let judged = |argv: &[&str]| {
        let split = Split::of_argv(argv);
        split.parts.iter().filter(|p| p.layer == Layer::Command).map(|p| p.command.shown()).collect::<Vec<_>>()
    };
    assert_eq!(judged(&["bash", "-lc", "ls"]), ["ls"]);
    assert_eq!(judged(&["zsh", "-lc", "ls"]), ["ls"]);
    assert_eq!(judged(&["/bin/bash", "-lc", "rm -rf /some/important/folder"]), ["rm -rf /some/important/folder"]);
    // The four-word form runs the script `git` with $0 = status.
    assert_eq!(judged(&["bash", "-lc", "git", "status"]), ["git"]);
    // A quoted script of one word names a program called `git status`.
    assert_eq!(judged(&["bash", "-lc", "'git status'"]), ["'git status'"]);
}
