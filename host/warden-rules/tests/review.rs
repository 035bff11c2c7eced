//! The ways past the rules a hostile review found (each checked against bash
//! or dash with recording programs), now judged: none may be allowed.

use warden_rules::{Decision, Rule, RuleSet};

fn rule(prefix: &[&[&str]], decision: Decision) -> Rule {
    Rule { prefix: prefix.iter().map(|a| a.iter().map(|w| w.to_string()).collect()).collect(), exact: false, decision, justification: None }
}

fn rules() -> RuleSet {
    RuleSet::new(
        vec![
            rule(&[&["touch"]], Decision::Forbid),
            rule(&[&["rm"], &["-rf"], &["/"]], Decision::Forbid),
            rule(&[&["git"], &["push"]], Decision::Ask),
            rule(&[&["git"], &["status", "diff", "log"]], Decision::Allow),
            rule(&[&["npm"], &["publish"]], Decision::Ask),
        ],
        Decision::Allow,
        Decision::Ask,
    )
}

#[track_caller]
fn never_allowed(scripts: &[&str]) {
    for script in scripts {
        let judged = rules().judge_script(script);
        assert_ne!(judged.decision, Decision::Allow, "{script:?} was allowed: {judged:#?}");
    }
}

#[test]
fn bash_only_redirections_run_under_sh_mean_something_else() {
    // dash reads `echo hi &` and then `>/dev/null touch /tmp/x`.
    never_allowed(&["echo hi &>/dev/null touch /tmp/x", "echo &>>/dev/null rm -rf /", "echo x |& touch y"]);
    // Read by bash, `&>` is a redirection: the script splits as bash reads it.
    let judged = rules().judge_argv(&["bash", "-c", "git status &>/dev/null"]);
    assert_eq!(judged.decision, Decision::Allow, "{judged:#?}");
}

#[test]
fn builtins_that_run_code_are_unparsed() {
    never_allowed(&[
        "coproc touch /tmp/x",
        "trap 'touch /tmp/x' EXIT",
        "builtin eval 'touch /tmp/x'",
        "eval -- 'touch /tmp/x'",
        "compgen -C 'touch /tmp/x' x",
        "mapfile -C 'touch /tmp/x' -c 1 <<< a",
        "PS4='$(touch /tmp/x)'; set -x; true",
        "set -o history -H\necho touch /tmp/x\n!:1-2",
        "set -o history\nhistory -s 'touch /tmp/x'\nfc -s",
        "let 'a[$(touch /tmp/x)]'",
    ]);
}

#[test]
fn arithmetic_that_evaluates_a_variable_is_unparsed() {
    never_allowed(&[
        "x='a[$(touch /tmp/x)]'; echo $((x))",
        "test -v 'a[$(touch /tmp/x)]'",
        "printf -v 'a[$(touch /tmp/x)]' %s 1",
        "read 'a[$(touch /tmp/x)]' <<< 1",
        "declare -i n; n='a[$(touch /tmp/x)]'",
        "echo ${a['$(touch /tmp/x)']}",
        "echo ${x:y}",
    ]);
    // A default value is no arithmetic.
    assert_eq!(rules().judge_script("echo ${HOME:-/tmp}").decision, Decision::Allow);
}

#[test]
fn wrapper_options_are_read_as_the_wrapper_reads_them() {
    never_allowed(&[
        "env - touch /tmp/x",
        "env A-B=1 touch /tmp/x",
        "env 'BASH_FUNC_git%%=() { touch /tmp/x; }' bash -c 'git status'",
        "echo a | xargs -i touch /tmp/x",
        "echo a | xargs -l touch /tmp/x",
        "bash -co posix 'touch /tmp/x'",
        "find . {-exec,touch} /tmp/x \\;",
        "A='-exec touch /tmp/x ;'; find . $A",
        "exec -a git-push git origin main",
        "sudo A=1 rm -rf /",
    ]);
    assert_eq!(rules().judge_script("sudo A=1 rm -rf /").decision, Decision::Forbid);
}

#[test]
fn other_names_for_shells_and_git_subcommands() {
    never_allowed(&["/usr/lib/git-core/git-push origin main", "git-push origin main", "rbash -c 'touch /tmp/x'", "hush -c 'touch /tmp/x'"]);
}

#[test]
fn git_settings_and_variables_that_run_commands() {
    never_allowed(&[
        "git -c help.autocorrect=immediate psuh origin main",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0='!touch /tmp/x' git p",
    ]);
    // Allowed by an allow rule only as itself: a setting or variable that may run a command makes it unmatched (allowed here only because unmatched is allow).
    let strict = RuleSet::new(rules().rules().to_vec(), Decision::Forbid, Decision::Ask);
    for script in ["git -c core.fsmonitor='touch /tmp/x;false' status", "git -c diff.external=/tmp/x diff", "GIT_EXTERNAL_DIFF=/tmp/x git diff", "git --exec-path=/tmp/ep status"] {
        assert_ne!(strict.judge_script(script).decision, Decision::Allow, "{script:?}");
    }
    assert_eq!(strict.judge_script("git -c user.name=x -c color.ui=never status").decision, Decision::Allow);
}

#[test]
fn interpreters_given_code_or_standard_input() {
    never_allowed(&[
        "python3 -W ignore -c 'import os'",
        "perl -I /tmp -e 'print'",
        "echo x | python3 /dev/stdin",
        "echo x | bash -",
        "bash /dev/stdin <<E\ntouch /tmp/x\nE",
        "echo 'touch /tmp/x' | BASH_ENV=/dev/stdin bash -c true",
    ]);
}

#[test]
fn a_path_change_inside_eval_holds_after_it() {
    let strict = RuleSet::new(rules().rules().to_vec(), Decision::Ask, Decision::Ask);
    assert_ne!(strict.judge_script("eval 'PATH=/tmp/e:$PATH'; git status").decision, Decision::Allow);
}

#[test]
fn an_uncertain_command_is_never_certain() {
    for script in ["PATH=/tmp/e:$PATH git push origin main", "./git push", "/tmp/e/git push", "npm {exec,--,touch,/tmp/x}", "git push origin $BRANCH"] {
        let judged = rules().judge_script(script);
        assert!(judged.commands.iter().filter(|c| !c.wrapper).any(|c| !c.certain), "{script:?}: {judged:#?}");
    }
    assert!(rules().judge_script("git push origin main").commands.iter().all(|c| c.certain));
}

/// The second review's findings, each checked against dash and bash.
#[test]
fn a_reserved_word_where_a_command_goes_is_unparsed() {
    never_allowed(&[
        "! { rm -rf /; }",
        "! { git push origin main; }",
        "! if true; then touch /tmp/x; fi",
        "! for f in /tmp/x; do touch $f; done",
    ]);
    for script in ["time ! touch /tmp/x", "time { touch /tmp/x; }", "time -p while git push origin main; do break; done", "time if true; then touch /tmp/x; fi"] {
        assert_ne!(rules().judge_argv(&["bash", "-c", script]).decision, Decision::Allow, "{script}");
    }
    assert_eq!(rules().judge_argv(&["bash", "-c", "time git status"]).decision, Decision::Allow);
}

#[test]
fn a_heredoc_delimiter_the_shell_reads_otherwise_is_unparsed() {
    never_allowed(&[
        "cat <<true\"\"\ntrue\ntouch /tmp/x\ngit push origin main\ntrue\"\"",
        "cat <<E\"X\"\nEX\ntouch /tmp/x\nE\"X\"",
        "cat <<E''X\nEX\ntouch /tmp/x\nE''X",
    ]);
    // Wholly quoted or plain: read alike.
    for script in ["cat <<'E'\n$(x)\nE", "cat <<\"E\"\nx\nE", "cat <<\\E\nx\nE", "cat <<E\nx\nE"] {
        assert!(rules().judge_script(script).unparsed.is_empty(), "{script:?}");
    }
}

#[test]
fn a_backslash_before_a_carriage_return_is_unparsed() {
    never_allowed(&["export -p \\\r\nrm -rf /", "declare \\\r\ngit push origin main"]);
}

#[test]
fn xargs_replace_strings_in_every_form() {
    never_allowed(&["echo push | xargs -IP git P origin main", "echo push | xargs -rI P git P origin main", "echo touch | xargs -tiX env X /tmp/x"]);
}

#[test]
fn variables_set_without_an_assignment_statement() {
    never_allowed(&[
        "set -a; : ${BASH_ENV:=/dev/stdin}; echo 'touch /tmp/x' | bash -c true",
        "set -a; : ${GIT_CONFIG_COUNT:=1} ${GIT_CONFIG_KEY_0:=core.fsmonitor}; git status",
        "command export BASH_ENV=/dev/stdin; echo 'touch /tmp/x' | bash -c true",
        "set -a; read GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0 <<E\n1 core.fsmonitor x\nE\ngit status",
        "printf -vPS4 %s x; set -x; :",
    ]);
    assert_ne!(rules().judge_argv(&["bash", "-k", "-c", "echo x | bash -c true BASH_ENV=/dev/stdin"]).decision, Decision::Allow);
    assert_ne!(rules().judge_argv(&["bash", "-c", "read -r PS4 <<'E'\n$(touch /tmp/x)\nE\nset -x; :"]).decision, Decision::Allow);
    // A PATH exported through `command` makes the later git uncertain.
    let judged = rules().judge_script("command export PATH=/tmp/e:/usr/bin; git push origin main");
    assert!(judged.commands.iter().any(|c| c.command.starts_with("git push") && !c.certain), "{judged:#?}");
}

#[test]
fn bash_evaluations_of_a_variable() {
    never_allowed(&["declare 'a[$(touch /tmp/x)]=1'", "x='a[$(touch /tmp/x)]'; echo \"${!x}\"", "x='$(touch /tmp/x)'; echo \"${x@P}\""]);
    // Neither a whole array nor a number offset evaluates anything.
    for script in ["echo \"${arr[@]}\"", "echo ${v:0:3}", "echo ${HOME:-/tmp}"] {
        assert!(rules().judge_script(script).unparsed.is_empty(), "{script:?}");
    }
}

#[test]
fn interpreter_options_are_read_as_the_interpreter_reads_them() {
    never_allowed(&[
        "python3 --check-hash-based-pycs default -c 'import os'",
        "node -C x -e 'x'",
        "node --require fs -e 'x'",
        "node --eval='x' y",
        "echo 'x' | python3 -i /dev/null",
        "perl5.36.0 -e 'print'",
        "bash /dev/fd/3 3<<E\ntouch /tmp/x\nE",
        "bash //dev/stdin",
        "PERL5OPT=-d perl /dev/null",
        "NODE_OPTIONS=--import=x node y.js",
    ]);
    // A question to an interpreter runs nothing; a script is judged as itself.
    for script in ["node -v", "perl -v", "python3 -VV", "python3 -u script.py", "python3 -m pytest -q"] {
        assert!(rules().judge_script(script).unparsed.is_empty(), "{script:?}");
    }
}

#[test]
fn more_programs_that_run_a_command() {
    never_allowed(&["linux64 touch /tmp/x", "setarch x86_64 touch /tmp/x", "prlimit --nofile=100 touch /tmp/x", "choom -n 0 -- touch /tmp/x", "strace -o /dev/null touch /tmp/x", "sg root 'touch /tmp/x'"]);
}

#[test]
fn a_wrapper_named_by_a_path_makes_what_it_runs_uncertain() {
    let strict = RuleSet::new(rules().rules().to_vec(), Decision::Forbid, Decision::Ask);
    for script in ["./env git status", "./timeout 1 git status", "./sh -c 'git status'"] {
        assert_ne!(strict.judge_script(script).decision, Decision::Allow, "{script}");
    }
}

#[test]
fn common_commands_stay_plain() {
    for script in ["command -v git", "unset VAR", "git -c safe.directory=/x status", "npm test", "cargo build --release 2>&1 | tail -5"] {
        assert!(rules().judge_script(script).unparsed.is_empty(), "{script:?}: {:?}", rules().judge_script(script).unparsed);
    }
}
