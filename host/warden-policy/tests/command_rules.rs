//! `shell.rules`: rules read in both forms, examples run when the policy
//! loads, errors at the rule's line and column, workers only stricter.

use std::fs;

use tempfile::TempDir;
use warden_policy::{Network, Policy};
use warden_rules::Decision;

fn load(yaml: &str) -> Result<Policy, String> {
    let dir = TempDir::new().unwrap();
    fs::create_dir(dir.path().join("project")).unwrap();
    let file = dir.path().join("policy.yaml");
    fs::write(&file, yaml).unwrap();
    warden_policy::load(&file).map_err(|e| e.to_string().strip_prefix(&file.display().to_string()).unwrap().to_owned())
}

const ISSUE_EXAMPLE: &str = r#"version: 1
sandbox:
  paths:
    project: { root: ./project, mode: rw }
  shell:
    rules:
      - { prefix: [git, push], decision: ask, justification: "pushes leave the machine",
          grant: { network: { allow: ["github.com:443"] } },
          match: ["git push origin main"], not_match: ["git status"] }
      - { prefix: [git, [status, diff, log]], decision: allow }
      - { prefix: [rm, -rf, /], decision: forbid, justification: "never" }
      - "Bash(npm test:*)"
    unmatched: allow
    unparsed: ask
"#;

#[test]
fn the_issues_example_loads_with_its_grant_and_examples() {
    let policy = load(ISSUE_EXAMPLE).unwrap();
    let rules = policy.command_rules_for(None).unwrap();
    assert_eq!(rules.set.rules().len(), 4);
    assert_eq!(rules.examples, 2);
    assert_eq!((rules.set.unmatched, rules.set.unparsed), (Decision::Allow, Decision::Ask));
    assert_eq!(rules.places[0], Some((7, 9)));
    assert_eq!(rules.grants[0].as_ref().and_then(|g| g.network.as_ref()).map(Network::allowed_hosts).as_deref(), Some("github.com:443"));
    assert_eq!(rules.set.judge_script("cd x && git push").decision, Decision::Ask);
    assert_eq!(rules.set.judge_script("npm test -- --watch").decision, Decision::Allow);
    assert_eq!(rules.set.judge_script("rm -rf /").decision, Decision::Forbid);
}

#[test]
fn without_rules_no_command_is_judged() {
    let policy = load("version: 1\nsandbox:\n  paths: { project: { root: ./project } }\n  shell: {}\n").unwrap();
    assert!(policy.command_rules_for(None).is_none());
}

#[test]
fn a_failing_match_example_is_an_invalid_policy_at_its_rule() {
    let yaml = ISSUE_EXAMPLE.replace(r#"match: ["git push origin main"]"#, r#"match: ["git pull"]"#);
    assert_eq!(
        load(&yaml).unwrap_err(),
        ":7:9: sandbox.shell.rules[0].match[0]: the example 'git pull' is not matched by this rule (git push ...)"
    );
}

#[test]
fn a_not_match_example_the_rule_matches_is_an_invalid_policy() {
    let yaml = ISSUE_EXAMPLE.replace(r#"not_match: ["git status"]"#, r#"not_match: [[git, -C, /x, push]]"#);
    assert_eq!(
        load(&yaml).unwrap_err(),
        r#":7:9: sandbox.shell.rules[0].not_match[0]: the example ["git", "-C", "/x", "push"] is matched by this rule (git push ...)"#
    );
}

#[test]
fn a_rule_that_is_neither_form_is_refused_with_its_place() {
    let yaml = ISSUE_EXAMPLE.replace(r#""Bash(npm test:*)""#, r#""npm test""#);
    assert_eq!(
        load(&yaml).unwrap_err(),
        ":12:9: sandbox.shell.rules[3]: 'npm test' is not a rule: write Bash(PREFIX:*) or Bash(COMMAND), or a mapping with `prefix`"
    );
    let yaml = ISSUE_EXAMPLE.replace("decision: allow }", "decision: maybe }");
    assert!(load(&yaml).unwrap_err().starts_with(":10:"), "{}", load(&yaml).unwrap_err());
}

#[test]
fn a_prefix_naming_a_path_or_nothing_is_refused() {
    let yaml = ISSUE_EXAMPLE.replace("prefix: [rm, -rf, /]", "prefix: [/bin/rm, -rf, /]");
    assert_eq!(load(&yaml).unwrap_err(), ":11:9: sandbox.shell.rules[2].prefix[0]: name the program, not a path: /usr/bin/git is judged as git");
    let yaml = ISSUE_EXAMPLE.replace("prefix: [rm, -rf, /]", "prefix: []");
    assert_eq!(load(&yaml).unwrap_err(), ":11:9: sandbox.shell.rules[2].prefix: an empty prefix would match every command; name at least the program");
}

#[test]
fn a_forbid_rule_cannot_grant() {
    let yaml = ISSUE_EXAMPLE.replace(r#"justification: "never" }"#, r#"justification: "never", grant: { network: true } }"#);
    assert_eq!(load(&yaml).unwrap_err(), ":11:9: sandbox.shell.rules[2].grant: a forbid rule runs nothing, so it grants nothing");
}

#[test]
fn a_worker_adds_stricter_rules_and_keeps_the_programs() {
    let yaml = format!("{ISSUE_EXAMPLE}workers:\n  careful:\n    inherit: true\n    shell:\n      rules: [{{ prefix: [git, diff], decision: ask }}]\n      unmatched: ask\n");
    let policy = load(&yaml).unwrap();
    let rules = policy.command_rules_for(Some("careful")).unwrap();
    assert_eq!(rules.set.judge_script("git diff").decision, Decision::Ask);
    assert_eq!(rules.set.judge_script("git push").decision, Decision::Ask);
    assert_eq!(rules.set.judge_script("make").decision, Decision::Ask);
    assert_eq!(rules.owners.last().unwrap().as_deref(), Some("careful"));
    assert_eq!(policy.command_rules_for(None).unwrap().set.judge_script("git diff").decision, Decision::Allow);
}

#[test]
fn a_worker_asking_for_looser_settings_is_refused() {
    let yaml = format!("{ISSUE_EXAMPLE}workers:\n  loose:\n    inherit: true\n    shell: {{ unparsed: allow }}\n");
    assert_eq!(
        load(&yaml).unwrap_err(),
        ":18:24: workers.loose.shell.unparsed: 'allow' is looser than the program's 'ask'; a worker's rules may only be stricter"
    );
}

#[test]
fn a_worker_cannot_grant_more_network_than_the_program_could() {
    let worker = "workers:\n  w:\n    inherit: true\n    shell:\n      rules: [{ prefix: [curl], decision: ask, grant: { network: { allow: [\"evil.example:443\"] } } }]\n";
    let error = load(&format!("{ISSUE_EXAMPLE}{worker}")).unwrap_err();
    assert_eq!(
        error,
        ":19:15: workers.w.shell.rules[0].grant.network: SandboxPermissionEscalationError: cannot grant network access to \
         'evil.example:443': the program's network and rules give only: github.com:443. Grant pairs within those, or \
         leave the grant to the program's rule."
    );
    let within = worker.replace("evil.example:443", "github.com:443");
    assert!(load(&format!("{ISSUE_EXAMPLE}{within}")).is_ok());
}

#[test]
fn a_write_grant_names_folders_of_writable_mounts_only() {
    let grant = |folder: &str| ISSUE_EXAMPLE.replace("decision: allow }", &format!("decision: allow, grant: {{ write: [{folder}] }} }}"));
    let policy = load(&grant("/project/build")).unwrap();
    assert_eq!(policy.command_rules_for(None).unwrap().grants[1].as_ref().unwrap().write, ["/project/build"]);
    assert_eq!(load(&grant("/elsewhere")).unwrap_err(), ":10:9: sandbox.shell.rules[1].grant.write[0]: /elsewhere lies in no mount: a grant gives no more than the policy could");
    let read_only = grant("/project/build").replace("project: { root: ./project, mode: rw }", "project: { root: ./project }");
    assert_eq!(load(&read_only).unwrap_err(), ":10:9: sandbox.shell.rules[1].grant.write[0]: /project/build lies in /project, which is read-only: a grant gives no more than the policy could");
    assert!(load(&grant("/project/../../etc")).unwrap_err().starts_with(":10:9: sandbox.shell.rules[1].grant.write[0]: '/project/../../etc': "));
}

#[test]
fn no_grant_for_a_command_that_may_not_be_what_it_says() {
    let policy = load(ISSUE_EXAMPLE).unwrap();
    let rules = policy.command_rules_for(None).unwrap();
    for script in ["PATH=/tmp/e:$PATH git push origin main", "./git push", "git push origin $B", "git push origin main; /tmp/e/echo x", "git push; printf x"] {
        assert!(rules.granted(&rules.set.judge_script(script), &Network::Off).is_none(), "{script}");
    }
    let granted = rules.granted(&rules.set.judge_script("cd /x && git push origin main; echo done"), &Network::Off).unwrap();
    assert_eq!(granted.network.allowed_hosts(), "github.com:443");
}
