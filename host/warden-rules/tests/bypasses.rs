//! Every way of dressing up `git push` that users of other agents found, each
//! judged as the push it is; and the look-alikes that are not pushes.

use warden_rules::{Decision, Rule, RuleSet};

fn rule(prefix: &[&[&str]], decision: Decision) -> Rule {
    Rule {
        prefix: prefix.iter().map(|alts| alts.iter().map(|w| w.to_string()).collect()).collect(),
        exact: false,
        decision,
        justification: None,
    }
}

/// The example: pushes asked, status and friends allowed, `rm -rf /` forbidden.
fn rules() -> RuleSet {
    RuleSet::new(
        vec![
            rule(&[&["git"], &["push"]], Decision::Ask),
            rule(&[&["git"], &["status", "diff", "log"]], Decision::Allow),
            rule(&[&["rm"], &["-rf"], &["/"]], Decision::Forbid),
            rule(&[&["cat"]], Decision::Allow),
            rule(&[&["echo"]], Decision::Allow),
        ],
        Decision::Allow,
        Decision::Ask,
    )
}

fn script(text: &str) -> Decision {
    rules().judge_script(text).decision
}

#[track_caller]
fn asked(text: &str) {
    let judged = rules().judge_script(text);
    assert_eq!(judged.decision, Decision::Ask, "{text:?} was judged {judged:#?}");
}

#[test]
fn a_plain_push_is_asked_and_status_runs() {
    asked("git push origin main");
    assert_eq!(script("git status"), Decision::Allow);
    assert_eq!(script("git log --oneline"), Decision::Allow);
}

#[test]
fn git_dash_c_before_the_subcommand_does_not_hide_the_push() {
    asked("git -C /x push");
    asked("git --git-dir=/x/.git --work-tree /x push");
    asked("git -c user.name=x --no-pager push");
}

#[test]
fn a_git_alias_defined_on_the_command_line_is_unparsed() {
    let judged = rules().judge_script("git -c alias.st=push st");
    assert_eq!(judged.decision, Decision::Ask);
    assert_eq!(judged.unparsed, ["git: -c alias.st=push defines a command of its own"]);
}

#[test]
fn every_command_of_a_list_is_judged() {
    asked("cd x && git push");
    asked("git status || git push");
    asked("git push;:");
    asked("git status; git push");
    asked("echo a | git push");
    asked("nohup git push &");
}

#[test]
fn environment_prefixes_are_seen_through() {
    asked("env A=1 git push");
    asked("A=1 B=2 git push");
    asked("env -i -u HOME git push");
}

#[test]
fn a_program_given_by_a_system_path_is_that_program() {
    asked("/usr/bin/git push");
    asked("/bin/git push");
}

#[test]
fn a_program_given_by_another_path_may_be_anything_but_is_never_allowed_by_name() {
    asked("./git push");
    let judged = rules().judge_script("/tmp/x/git status");
    assert_eq!(judged.decision, Decision::Allow, "unmatched is allow: {judged:#?}");
    assert_eq!(judged.commands[0].by, "unmatched");
}

#[test]
fn shells_given_a_script_are_judged_by_the_script() {
    asked("bash -lc 'git push'");
    asked("sh -c \"git push\"");
    asked("bash -c 'sh -c \"git status && git push\"'");
    asked("bash -e -c 'git push'");
}

#[test]
fn command_substitution_is_unparsed() {
    let judged = rules().judge_script("$(echo git) push");
    assert_eq!(judged.decision, Decision::Ask);
    assert!(judged.unparsed.iter().any(|r| r.starts_with("a command substitution: $(echo git)")), "{judged:#?}");
    asked("`echo git` push");
    asked("git $(echo push)");
}

#[test]
fn a_heredoc_or_pipe_into_a_shell_is_unparsed() {
    asked("sh <<EOF\ngit push\nEOF");
    asked("bash <<< 'git push'");
    asked("echo 'git push' | sh");
    asked("cat script | bash -s");
}

#[test]
fn xargs_and_find_exec_are_judged_by_what_they_run() {
    asked("xargs git push");
    asked("echo origin | xargs -n 1 git push");
    asked("find . -exec git push \\;");
    asked("find . -name x -execdir git push {} +");
}

#[test]
fn timeout_nice_time_command_and_exec_are_seen_through() {
    asked("timeout 5 git push");
    asked("timeout -s KILL 5s git push");
    asked("nice -n 10 git push");
    asked("time git push");
    asked("command git push");
    asked("exec git push");
    asked("nohup nice timeout 5 env A=1 git push");
}

#[test]
fn sudo_is_never_allowed_without_a_person() {
    let judged = rules().judge_script("sudo git status");
    assert_eq!(judged.decision, Decision::Ask);
    assert_eq!(judged.commands.last().unwrap().by, "sudo");
    assert_eq!(script("sudo -u root rm -rf /"), Decision::Forbid);
}

#[test]
fn quoting_and_escapes_do_not_hide_a_word() {
    asked("g\\it push");
    asked("'git' \"push\"");
    asked("gi't' pu\"sh\"");
}

#[test]
fn expansions_and_globs_may_be_anything_so_they_are_asked() {
    asked("git $SUB");
    asked("git pu*");
    asked("git {push,status}");
}

#[test]
fn control_flow_and_functions_are_unparsed_and_their_commands_judged() {
    asked("if true; then git status; fi");
    asked("f() { git status; }; f");
    asked("(git status)");
    assert_eq!(script("for x in a; do rm -rf /; done"), Decision::Forbid);
}

#[test]
fn a_forbidden_command_hidden_behind_a_substitution_goes_to_a_person() {
    let judged = rules().judge_script("rm -rf $(echo /)");
    assert_eq!(judged.decision, Decision::Ask);
    let rm = judged.commands.iter().find(|c| c.command.starts_with("rm")).unwrap();
    assert_eq!((rm.command.as_str(), rm.rules.as_slice()), ("rm -rf $(echo /)", [2].as_slice()));
    assert_eq!(script("$(echo rm) -rf /"), Decision::Ask);
    assert_eq!(script("rm -rf / $(echo x)"), Decision::Forbid);
}

#[test]
fn forbid_wins_over_ask_and_allow() {
    assert_eq!(script("git status && rm -rf /"), Decision::Forbid);
    assert_eq!(script("bash -c 'git push; rm -rf /'"), Decision::Forbid);
}

#[test]
fn a_redirection_to_a_network_socket_is_unparsed() {
    asked("echo hi > /dev/tcp/127.0.0.1/80");
}

#[test]
fn interpreter_code_on_the_command_line_is_unparsed() {
    asked("python3 -c 'import os; os.system(\"git push\")'");
    asked("node -e 'x'");
    asked("perl -ne 'print'");
    assert_eq!(script("python3 script.py"), Decision::Allow);
}

#[test]
fn eval_is_judged_by_its_words() {
    asked("eval git push");
    asked("eval \"$CMD\"");
}

#[test]
fn look_alikes_that_are_not_pushes_run() {
    assert_eq!(script("echo \"git push\""), Decision::Allow);
    assert_eq!(script("echo git push"), Decision::Allow);
    assert_eq!(script("git pushd"), Decision::Allow);
    assert_eq!(script("git status # git push"), Decision::Allow);
    assert_eq!(script("cat > notes.md <<EOF\ngit push\nEOF"), Decision::Allow);
    assert_eq!(script("cat > notes.md <<'EOF'\n$(git push)\nEOF"), Decision::Allow);
    assert_eq!(script("ls *.md"), Decision::Allow);
}

#[test]
fn a_command_substitution_in_an_unquoted_heredoc_runs_and_is_judged() {
    asked("cat > notes.md <<EOF\n$(git push)\nEOF");
}

#[test]
fn an_argv_is_matched_as_given_and_sh_c_in_it_is_split() {
    let rules = rules();
    assert_eq!(rules.judge_argv(&["git", "push"]).decision, Decision::Ask);
    assert_eq!(rules.judge_argv(&["echo", "git push"]).decision, Decision::Allow);
    assert_eq!(rules.judge_argv(&["/bin/sh", "-c", "git status && git push"]).decision, Decision::Ask);
    assert_eq!(rules.judge_argv(&["rm", "-rf", "/"]).decision, Decision::Forbid);
}

#[test]
fn a_nul_byte_or_bad_syntax_is_unparsed() {
    asked("git status\0; git push");
    asked("git status &&");
    asked("echo 'unterminated");
}

#[test]
fn nesting_past_the_limit_is_unparsed() {
    let judged = rules().judge_script(&format!("{}git status", "eval ".repeat(10)));
    assert_eq!(judged.decision, Decision::Ask);
    assert_eq!(judged.unparsed, ["scripts nested more than 8 deep"]);
}

#[test]
fn claude_code_rules_read_as_allow_prefixes_or_exact_commands() {
    let prefix = Rule::from_claude("Bash(npm test:*)").unwrap();
    assert_eq!((prefix.exact, prefix.decision, prefix.shown()), (false, Decision::Allow, "npm test ...".to_owned()));
    let exact = Rule::from_claude("Bash(npm test)").unwrap();
    let set = RuleSet::new(vec![exact], Decision::Forbid, Decision::Forbid);
    assert_eq!(set.judge_script("npm test").decision, Decision::Allow);
    assert_eq!(set.judge_script("npm test --watch").decision, Decision::Forbid);
    assert_eq!(
        Rule::from_claude("Bash(rm $(x):*)").unwrap_err(),
        "'Bash(rm $(x):*)': only plain words and a trailing :* are understood"
    );
}

/// The same rules, with commands no rule names asked about: what an allow rule lets through shows.
fn allowlist() -> RuleSet {
    let rules = rules();
    RuleSet::new(rules.rules().to_vec(), Decision::Ask, Decision::Ask)
}

#[test]
fn a_changed_path_or_preload_makes_no_program_the_one_its_name_says() {
    let allow = |s: &str| allowlist().judge_script(s).decision;
    assert_eq!(allow("cat notes.md"), Decision::Allow);
    // Codex's heredoc bypass: an allowed name run from another PATH.
    assert_eq!(allow("PATH=/tmp/evil:$PATH cat <<'EOF'\nhello\nEOF"), Decision::Ask);
    assert_eq!(allow("export PATH=/tmp/evil; git status"), Decision::Ask);
    assert_eq!(allow("LD_PRELOAD=/tmp/x.so /usr/bin/git status"), Decision::Ask);
    assert_eq!(allow("env PATH=/tmp/evil git status"), Decision::Ask);
    assert_eq!(allow("PATH=/tmp/evil bash -c 'git status'"), Decision::Ask);
    // Other variables change nothing of the sort.
    assert_eq!(allow("LANG=C git status"), Decision::Allow);
    // A forbid rule still applies to the program whatever runs it.
    assert_eq!(script("PATH=/tmp/evil rm -rf /"), Decision::Forbid);
}

#[test]
fn sourcing_a_script_or_redefining_names_is_unparsed() {
    asked(". ./env.sh && git status");
    asked("source venv/bin/activate");
    asked("alias ls=rm; ls -rf /");
    asked("hash -p /tmp/evil/git git; git status");
}

#[test]
fn a_line_break_inside_a_word_is_unparsed_and_between_words_is_space() {
    asked("g\\\nit status; gi\\\nt pu\\\nsh");
    let judged = rules().judge_script("g\\\nit push");
    assert_eq!(judged.unparsed, ["a line break inside a word (backslash-newline), which bash joins"]);
    asked("git \\\npush");
    assert_eq!(script("git \\\n  status"), Decision::Allow);
    // A comment ends at its line: the next line runs, and is judged.
    asked("# a comment \\\ngit push");
}

#[test]
fn shell_options_that_change_how_words_are_read_are_unparsed() {
    asked("shopt -s extglob; git pu@(sh)");
    asked("git +(push)");
}

/// Where tree-sitter-bash reads a script otherwise than bash (found by `against_bash`).
#[test]
fn words_the_grammar_hangs_on_a_redirection_are_the_commands_arguments() {
    asked("git 2>&1 push");
    asked("git >/dev/null push origin");
    asked(">out git push");
    assert_eq!(rules().judge_script("git >out'#'\\# status").decision, Decision::Allow);
}

#[test]
fn commands_the_grammar_puts_inside_a_heredoc_are_judged() {
    asked("cat <<E && git push\nx\nE");
    asked("cat <<E | sh\ngit push\nE");
    assert_eq!(script("cat <<E && rm -rf /\nx\nE"), Decision::Forbid);
}

#[test]
fn text_the_grammar_reads_otherwise_than_bash_is_unparsed() {
    for script in ["git -C2>&1 status", "git -C<<E status\nx\nE", "git \\ status", "git # note \\\n\\rm -rf /", "E\n\\git status"] {
        let judged = rules().judge_script(script);
        assert!(!judged.unparsed.is_empty() && judged.decision >= Decision::Ask, "{script:?}: {judged:#?}");
    }
}

#[test]
fn a_descriptor_number_after_a_line_break_is_unparsed() {
    let judged = rules().judge_script("git status\\\n 2>&1");
    assert!(judged.unparsed.iter().any(|r| r.starts_with("a descriptor number the grammar does not read as bash does")), "{judged:#?}");
}
