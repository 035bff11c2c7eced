//! An outside suite: the cases of OpenAI Codex's `execpolicy` tests
//! (codex-rs/execpolicy/tests/basic.rs and examples/example.codexpolicy),
//! written as Warden policies. Where Warden decides otherwise on purpose, the
//! test says so and the table of differences in docs/src/shell/rules.md lists it.

use std::fs;

use tempfile::TempDir;
use warden_policy::Policy;
use warden_rules::{Decision, Judgement};

fn load(rules: &str, settings: &str) -> Result<Policy, String> {
    let dir = TempDir::new().unwrap();
    fs::create_dir(dir.path().join("work")).unwrap();
    let yaml = format!("version: 1\nsandbox:\n  paths:\n    work: {{ root: ./work }}\n  shell:\n    rules:\n{rules}{settings}");
    let file = dir.path().join("policy.yaml");
    fs::write(&file, yaml).unwrap();
    warden_policy::load(&file).map_err(|e| e.to_string().strip_prefix(&file.display().to_string()).unwrap().to_owned())
}

fn judge(policy: &Policy, argv: &[&str]) -> Judgement {
    policy.command_rules_for(None).unwrap().set.judge_argv(argv)
}

/// The rules each judged command was decided by, in order.
fn rules_of(judged: &Judgement) -> Vec<Vec<usize>> {
    judged.commands.iter().filter(|c| !c.wrapper).map(|c| c.rules.clone()).collect()
}

#[test]
fn basic_match() {
    let policy = load("      - { prefix: [git, status], decision: allow }\n", "    unmatched: ask\n").unwrap();
    let judged = judge(&policy, &["git", "status"]);
    assert_eq!((judged.decision, rules_of(&judged)), (Decision::Allow, vec![vec![0]]));
}

#[test]
fn justification_is_attached_to_forbidden_matches() {
    let policy = load("      - { prefix: [rm], decision: forbid, justification: destructive command }\n", "").unwrap();
    let judged = judge(&policy, &["rm", "-rf", "/some/important/folder"]);
    assert_eq!(judged.decision, Decision::Forbid);
    let rule = &policy.command_rules_for(None).unwrap().set.rules()[judged.commands[0].rules[0]];
    assert_eq!(rule.justification.as_deref(), Some("destructive command"));
}

#[test]
fn justification_can_be_used_with_allow_decision_and_a_rule_overrides_the_fallback() {
    let policy = load("      - { prefix: [ls], decision: allow, justification: safe and commonly used }\n", "    unmatched: ask\n").unwrap();
    assert_eq!(judge(&policy, &["ls", "-l"]).decision, Decision::Allow);
}

#[test]
fn justification_cannot_be_empty() {
    let error = load("      - { prefix: [ls], decision: ask, justification: \"   \" }\n", "").unwrap_err();
    assert_eq!(error, ":7:9: sandbox.shell.rules[0].justification: an empty justification explains nothing; leave it out or say why");
}

#[test]
fn an_empty_prefix_or_an_empty_word_is_refused() {
    assert!(load("      - { prefix: [], decision: ask }\n", "").unwrap_err().contains("an empty prefix would match every command"));
    assert!(load("      - { prefix: [\"\"], decision: ask }\n", "").unwrap_err().contains("no word may be empty"));
    assert!(load("      - { prefix: [[git, \"\"]], decision: ask }\n", "").unwrap_err().contains("no word may be empty"));
    assert!(load("      - { prefix: [git, []], decision: ask }\n", "").unwrap_err().contains("every position needs at least one word"));
}

/// Codex's `parses_multiple_policy_files`: here the second file is a worker's rules on top of the program's.
#[test]
fn rules_added_on_top_keep_the_earlier_ones_and_the_strictest_wins() {
    let worker = "workers:\n  w:\n    inherit: true\n    shell: { rules: [{ prefix: [git, commit], decision: forbid }] }\n";
    let policy = load("      - { prefix: [git], decision: ask }\n", worker).unwrap();
    let rules = &policy.command_rules_for(Some("w")).unwrap().set;
    let status = rules.judge_argv(&["git", "status"]);
    assert_eq!((status.decision, rules_of(&status)), (Decision::Ask, vec![vec![0]]));
    let commit = rules.judge_argv(&["git", "commit", "-m", "hi"]);
    assert_eq!((commit.decision, rules_of(&commit)), (Decision::Forbid, vec![vec![0, 1]]));
}

#[test]
fn alternatives_in_the_first_position() {
    let policy = load("      - { prefix: [[bash, sh], [-c, -l]], decision: allow }\n", "").unwrap();
    let judged = judge(&policy, &["sh", "-l", "echo", "hi"]);
    assert_eq!((judged.decision, rules_of(&judged)), (Decision::Allow, vec![vec![0]]));
    // Difference: `bash -c SCRIPT` is judged by what the script runs, the rule naming
    // `bash -c` only judges the wrapper. Under `unmatched: ask`, `echo` is asked.
    let strict = load("      - { prefix: [[bash, sh], [-c, -l]], decision: allow }\n", "    unmatched: ask\n").unwrap();
    let judged = judge(&strict, &["bash", "-c", "echo", "hi"]);
    assert_eq!(judged.decision, Decision::Ask);
    assert_eq!((judged.commands[0].wrapper, judged.commands[0].rules.as_slice()), (true, [0].as_slice()));
    assert_eq!(judged.commands[1].command, "echo");
}

#[test]
fn alternatives_in_later_positions_are_sets_not_products() {
    let policy = load("      - { prefix: [npm, [i, install], [--legacy-peer-deps, --no-save]], decision: allow }\n", "    unmatched: ask\n").unwrap();
    assert_eq!(judge(&policy, &["npm", "i", "--legacy-peer-deps"]).decision, Decision::Allow);
    assert_eq!(judge(&policy, &["npm", "install", "--no-save", "leftpad"]).decision, Decision::Allow);
    assert_eq!(judge(&policy, &["npm", "i", "leftpad"]).decision, Decision::Ask);
}

#[test]
fn match_and_not_match_examples_are_enforced() {
    let rule = "      - { prefix: [git, status], decision: allow,\n          match: [[git, status], \"git status\"],\n          not_match: [[git, --config, color.status=always, status], \"git --config color.status=always status\"] }\n";
    let policy = load(rule, "    unmatched: ask\n").unwrap();
    assert_eq!(judge(&policy, &["git", "status"]).decision, Decision::Allow);
    // `--config` is no git option: Warden cannot see past it (unparsed), and the rule does not match.
    let judged = judge(&policy, &["git", "--config", "color.status=always", "status"]);
    assert_eq!((judged.decision, rules_of(&judged)), (Decision::Ask, vec![vec![]]));
    // Difference: git's real global options are seen through, so `-c` does not defeat the prefix.
    assert_eq!(judge(&policy, &["git", "-c", "color.status=always", "status"]).decision, Decision::Allow);
}

#[test]
fn strictest_decision_wins_across_matches_and_across_commands() {
    let policy = load("      - { prefix: [git], decision: ask }\n      - { prefix: [git, commit], decision: forbid }\n", "").unwrap();
    let judged = judge(&policy, &["git", "commit", "-m", "hi"]);
    assert_eq!((judged.decision, rules_of(&judged)), (Decision::Forbid, vec![vec![0, 1]]));
    let judged = policy.command_rules_for(None).unwrap().set.judge_script("git status && git commit -m hi");
    assert_eq!((judged.decision, rules_of(&judged)), (Decision::Forbid, vec![vec![0], vec![0, 1]]));
}

#[test]
fn the_fallback_decides_when_no_rule_matches() {
    let policy = load("      - { prefix: [ls], decision: allow }\n", "    unmatched: ask\n").unwrap();
    let judged = judge(&policy, &["make"]);
    assert_eq!((judged.decision, judged.commands[0].by), (Decision::Ask, "unmatched"));
}

#[test]
fn a_program_given_by_its_system_path_is_judged_by_its_name() {
    let policy = load("      - { prefix: [git, status], decision: ask }\n      - { prefix: [ls], decision: allow }\n", "    unmatched: ask\n").unwrap();
    assert_eq!(judge(&policy, &["/usr/bin/git", "status"]).decision, Decision::Ask);
    // Difference: a path outside the system folders is judged by its name for ask and
    // forbid rules (Codex: only paths its host_executable lists), and never allowed by name.
    assert_eq!(judge(&policy, &["/opt/homebrew/bin/git", "status"]).decision, Decision::Ask);
    assert_eq!(judge(&policy, &["/bin/ls"]).decision, Decision::Allow);
    assert_eq!(judge(&policy, &["/tmp/ls"]).decision, Decision::Ask);
    // Difference: a rule names programs, never paths (Codex allows a rule for `/usr/bin/git`).
    let error = load("      - { prefix: [/usr/bin/git], decision: allow }\n", "").unwrap_err();
    assert!(error.ends_with("name the program, not a path: /usr/bin/git is judged as git"), "{error}");
}

/// examples/example.codexpolicy, every rule with its examples, checked at load.
#[test]
fn the_example_policy_loads_and_decides() {
    let rules = r#"      - { prefix: [git, reset, --hard], decision: forbid, justification: destructive operation,
          match: [[git, reset, --hard]], not_match: [[git, reset, --keep], "git reset --merge"] }
      - { prefix: [ls], decision: allow, match: [[ls], [ls, -l], [ls, -a, .]] }
      - { prefix: [cat], decision: allow, match: [[cat, file.txt], [cat, -n, README.md]] }
      - { prefix: [cp], decision: ask, match: [[cp, foo, bar], "cp -r src dest"] }
      - { prefix: [head], decision: allow, match: [[head, README.md], [head, -n, "5", CHANGELOG.md]], not_match: [[hea, -n, "1,5p", CHANGELOG.md]] }
      - { prefix: [printenv], decision: allow, match: [[printenv], [printenv, PATH]], not_match: [[print, "-0"]] }
      - { prefix: [pwd], decision: allow, match: [[pwd]] }
      - { prefix: [which], decision: allow, match: [[which, python3], [which, -a, python3]] }
"#;
    let policy = load(rules, "    unmatched: ask\n").unwrap();
    assert_eq!(policy.command_rules_for(None).unwrap().examples, 19);
    assert_eq!(judge(&policy, &["git", "reset", "--hard", "HEAD~1"]).decision, Decision::Forbid);
    assert_eq!(judge(&policy, &["git", "reset", "--keep"]).decision, Decision::Ask);
    assert_eq!(judge(&policy, &["cp", "-r", "src", "dest"]).decision, Decision::Ask);
    assert_eq!(judge(&policy, &["head", "-n", "5", "CHANGELOG.md"]).decision, Decision::Allow);
}

/// Codex's error-reporting case: a one-word prefix holding a space never matches the example's words.
#[test]
fn an_example_that_cannot_match_is_an_error_at_its_rule() {
    let error = load("      - { prefix: [\"tmux capture-pane\"], decision: ask, match: [\"tmux capture-pane -p\"] }\n", "").unwrap_err();
    assert_eq!(error, ":7:9: sandbox.shell.rules[0].match[0]: the example 'tmux capture-pane -p' is not matched by this rule (tmux capture-pane ...)");
}
