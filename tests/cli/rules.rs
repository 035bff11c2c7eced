//! Command rules under `warden exec`: forbid refused before anything runs,
//! ask put to a person (or answered in advance) and audited, every bypass
//! class judged as the command it hides, and a rule's network grant given to
//! that command alone.

use std::process::Command;

use serde_json::Value;

use super::pty::Terminal;
use super::{warden, Fixture, Run};

/// `touch` stands in for a command that must never run: its file shows whether it did.
const RULES: &str = "\
version: 1
sandbox:
  paths:
    portfolio: { root: ./portfolio, mode: rw }
  audit: ./audit.jsonl
  shell:
    rules:
      - { prefix: [touch], decision: forbid, justification: \"nothing is touched here\" }
      - { prefix: [git, push], decision: ask, justification: \"pushes leave the machine\",
          match: [\"git push origin main\"], not_match: [\"git status\"] }
      - { prefix: [git, [status, log]], decision: allow }
    unparsed: ask
";

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.file("policy.yaml", RULES);
    f
}

fn exec(f: &Fixture, extra: &[&str], command: &[&str]) -> Run {
    let policy = f.path("policy.yaml");
    let mut args = vec!["exec", "--policy", policy.to_str().unwrap(), "--cwd", "/portfolio"];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(command);
    warden(&args, "")
}

fn audit(f: &Fixture) -> Vec<Value> {
    std::fs::read_to_string(f.path("audit.jsonl")).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_forbidden_command_exits_126_with_the_justification_and_never_runs() {
    let f = fixture();
    let r = exec(&f, &[], &["touch", "made"]);
    assert_eq!((r.status, r.stdout.as_str()), (126, ""));
    assert_eq!(r.stderr, "Cannot run 'touch made': the policy forbids 'touch ...': nothing is touched here.\n");
    assert!(!f.path("portfolio/made").exists());
    let record = &audit(&f)[0];
    assert_eq!((record["operation"].as_str(), record["path"].as_str(), record["decision"].as_str()), (Some("run"), Some("touch made"), Some("refused")));
    assert_eq!(record["refusal"], "Cannot run 'touch made': the policy forbids 'touch ...': nothing is touched here.");
}

#[test]
fn every_way_of_hiding_a_forbidden_command_is_refused_before_it_runs() {
    let f = fixture();
    for hidden in [
        "cd . && touch made",
        "env A=1 touch made",
        "/usr/bin/touch made",
        "timeout 5 touch made",
        "nohup touch made &",
        "bash -lc 'touch made'",
        "sh -c \"true; touch made\"",
        "echo made | xargs touch",
        "find . -maxdepth 0 -exec touch made \\;",
        "true;touch made",
        "t\\ouch made",
    ] {
        let r = exec(&f, &[], &["/bin/sh", "-c", hidden]);
        assert_eq!(r.status, 126, "{hidden}: {}", r.stderr);
        assert!(r.stderr.contains("the policy forbids 'touch ...': nothing is touched here."), "{hidden}: {}", r.stderr);
        assert!(!f.path("portfolio/made").exists(), "{hidden} ran");
    }
}

#[test]
fn what_warden_cannot_read_goes_to_a_person_and_without_one_never_runs() {
    let f = fixture();
    for unreadable in ["$(echo touch) made", "sh <<EOF\ntouch made\nEOF", "python3 -c 'open(\"made\", \"w\")'", "eval \"$CMD\""] {
        let r = exec(&f, &[], &["/bin/sh", "-c", unreadable]);
        assert_eq!(r.status, 126, "{unreadable}: {}", r.stderr);
        assert!(r.stderr.ends_with("': the command needs the user's approval, which may be requested.\n"), "{unreadable}: {}", r.stderr);
        assert!(!f.path("portfolio/made").exists(), "{unreadable} ran");
    }
    // Look-alikes are not the command they mention.
    let r = exec(&f, &[], &["/bin/sh", "-c", "echo \"touch made\"; cat > notes.md <<EOF\ntouch made\nEOF"]);
    assert_eq!((r.status, r.stdout.as_str()), (0, "touch made\n"), "{}", r.stderr);
}

#[test]
fn an_asking_rule_without_a_person_refuses_and_audits_the_rule() {
    let f = fixture();
    let r = exec(&f, &[], &["git", "-C", "/x", "push"]);
    assert_eq!(r.status, 126);
    assert_eq!(r.stderr, "Cannot run 'git -C /x push': the command needs the user's approval, which may be requested.\n");
    let record = &audit(&f)[0];
    let fields: Vec<&str> = ["operation", "decision", "rule", "justification"].iter().map(|k| record[k].as_str().unwrap()).collect();
    assert_eq!(fields, ["run", "unanswered", "git push ...", "the rule 'git push ...' asks: pushes leave the machine"]);
}

#[test]
fn answers_given_in_advance_name_a_prefix_and_are_audited() {
    let f = fixture();
    // `git push` fails here (no repository): that it ran is what counts.
    let r = exec(&f, &["--approve", "exec:git push"], &["/bin/sh", "-c", "git push 2>/dev/null; echo ran"]);
    assert_eq!((r.status, r.stdout.as_str()), (0, "ran\n"), "{}", r.stderr);
    let r = exec(&f, &["--approve", "deny-exec:git push"], &["git", "push"]);
    assert_eq!((r.status, r.stderr.as_str()), (126, "Cannot run 'git push': the user declined it.\n"));
    // An answer for another prefix answers nothing: denied.
    let r = exec(&f, &["--approve", "exec:git pull"], &["git", "push"]);
    assert_eq!(r.status, 126);
    let decisions: Vec<(String, Value)> = audit(&f).iter().map(|r| (r["decision"].as_str().unwrap().to_owned(), r["scope"].clone())).collect();
    assert_eq!(decisions, [("allow".into(), Value::from("session")), ("deny".into(), Value::Null), ("deny".into(), Value::Null)]);
}

#[test]
fn an_answer_in_advance_never_answers_a_line_warden_cannot_read() {
    let f = fixture();
    let r = exec(&f, &["--approve", "exec:git push"], &["/bin/sh", "-c", "git push $(echo x)"]);
    assert_eq!(r.status, 126, "{}", r.stderr);
    assert!(r.stderr.ends_with("the user declined it.\n"), "{}", r.stderr);
}

#[test]
fn a_person_at_the_terminal_is_asked_with_the_rule_and_its_justification() {
    let f = fixture();
    let policy = f.path("policy.yaml");
    let mut command = Command::new(env!("CARGO_BIN_EXE_warden"));
    command.args(["exec", "--policy", policy.to_str().unwrap(), "--cwd", "/portfolio", "--", "/bin/sh", "-c", "git push 2>/dev/null; echo ran"]);
    let mut t = Terminal::spawn(command);
    t.expect("[d] deny ? ");
    t.press("o");
    let (status, screen) = t.finish();
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("warden: warden exec asks to run git push 2>/dev/null; echo ran\n"), "{screen}");
    assert!(screen.contains("  because the rule 'git push ...' asks: pushes leave the machine\n"), "{screen}");
    assert!(screen.contains("  [o] allow once  [s] allow 'git push ...' for this session  [d] deny ? allowed once\nran\n"), "{screen}");
    assert_eq!(audit(&f)[0]["scope"], "once");
}

#[test]
fn rules_check_prints_the_split_and_the_deciding_rule() {
    let f = fixture();
    let policy = f.path("policy.yaml");
    let r = warden(&["rules", "check", "--policy", policy.to_str().unwrap(), "--", "env", "A=1", "git", "-C", "/x", "push"], "");
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "decision: ask\n  -      env A=1 git -C /x push (wrapper)\n  ask    git push\n         inside: env A=1 > git -C /x\n         \
         rule 1 (line 9, column 9): ask git push ...: pushes leave the machine\n"
    );
    let r = warden(&["rules", "check", "--policy", policy.to_str().unwrap(), "--json", "--script", "git status && $(x)"], "");
    let judged: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!((judged["decision"].as_str(), judged["unparsed"][0].as_str()), (Some("ask"), Some("a command substitution: $(x)")));
    assert_eq!(judged["commands"][0]["rules"][0]["prefix"], "git [status|log] ...");
    let r = warden(&["rules", "check", "--policy", policy.to_str().unwrap(), "--expect", "allow", "--", "git", "push"], "");
    assert_eq!((r.status, r.stderr.as_str()), (1, "warden: expected allow, the rules say ask\n"));
}

#[test]
fn check_lists_the_rules_and_a_failing_example_is_an_invalid_policy() {
    let f = fixture();
    let policy = f.path("policy.yaml");
    let r = warden(&["check", policy.to_str().unwrap()], "");
    assert!(r.stdout.contains("  command rules: 3 (2 examples checked), unmatched allow, unparsed ask\n"), "{}", r.stdout);
    assert!(r.stdout.contains("    line 9:9  ask    git push ...  (pushes leave the machine)\n"), "{}", r.stdout);
    f.file("policy.yaml", &RULES.replace(r#"not_match: ["git status"]"#, r#"not_match: ["git push"]"#));
    let r = warden(&["check", policy.to_str().unwrap()], "");
    assert_eq!(r.status, 2);
    assert!(r.stderr.ends_with(":9:9: sandbox.shell.rules[1].not_match[0]: the example 'git push' is matched by this rule (git push ...)\n"), "{}", r.stderr);
}

/// A smart-HTTP git server on loopback: Python's CGI server running
/// `git http-backend` over the bare repositories in `root`. Killed on drop.
struct GitServer {
    child: std::process::Child,
    port: u16,
}

impl GitServer {
    fn start(f: &Fixture, root: &str) -> GitServer {
        use std::io::BufRead;
        use std::os::unix::fs::PermissionsExt;
        let script = f.path("web/cgi-bin/git");
        f.file("web/cgi-bin/git", &format!("#!/bin/sh\nexport GIT_PROJECT_ROOT={} GIT_HTTP_EXPORT_ALL=1\nexec git http-backend\n", f.path(root).display()));
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        // As root the CGI server would run the script as `nobody`, who cannot write the repository.
        let serve = "import http.server as h, os; h.nobody_uid = os.getuid; h.test(HandlerClass=h.CGIHTTPRequestHandler, port=0, bind='127.0.0.1')";
        let mut child = Command::new("python3")
            .args(["-u", "-c", serve])
            .current_dir(f.path("web"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        let port = line.split(" port ").nth(1).and_then(|rest| rest.split(' ').next()).and_then(|p| p.parse().ok());
        GitServer { child, port: port.unwrap_or_else(|| panic!("no port in {line:?}")) }
    }
}

impl Drop for GitServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_push_gets_the_rules_network_grant_after_approval_and_nothing_else_does() {
    let f = fixture();
    std::fs::create_dir_all(f.path("remote/repo.git")).unwrap();
    git(&f.path("remote/repo.git"), &["init", "-q", "--bare", "-b", "main"]);
    git(&f.path("remote/repo.git"), &["config", "http.receivepack", "true"]);
    std::fs::create_dir_all(f.path("portfolio/proj")).unwrap();
    let proj = f.path("portfolio/proj");
    git(&proj, &["init", "-q", "-b", "main"]);
    f.file("portfolio/proj/readme.md", "pushed");
    git(&proj, &["add", "readme.md"]);
    git(&proj, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"]);
    let server = GitServer::start(&f, "remote");
    let url = format!("http://127.0.0.1:{}/cgi-bin/git/repo.git", server.port);
    let granted = format!("grant: {{ network: {{ allow: [\"127.0.0.1:{}\"] }} }},\n          match:", server.port);
    f.file("policy.yaml", &RULES.replacen("match:", &granted, 1));
    let policy = f.path("policy.yaml");
    let run = |approve: &[&str], command: &[&str]| {
        let mut args = vec!["exec", "--policy", policy.to_str().unwrap(), "--cwd", "/portfolio/proj"];
        args.extend_from_slice(approve);
        args.push("--");
        args.extend_from_slice(command);
        warden(&args, "")
    };
    // Without the grant (a command no rule grants), the server is out of reach.
    let r = run(&[], &["git", "ls-remote", &url]);
    assert_ne!(r.status, 0, "{}", r.stdout);
    // Without a person, the push never runs.
    let r = run(&[], &["git", "push", &url, "main"]);
    assert_eq!(r.status, 126, "{}", r.stderr);
    assert!(Command::new("git").arg("-C").arg(f.path("remote/repo.git")).args(["rev-parse", "--verify", "-q", "main"]).output().unwrap().stdout.is_empty());
    // Approved, the push reaches the server through the grant.
    let r = run(&["--approve", "exec:git push"], &["git", "push", "-q", &url, "main"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(git(&f.path("remote/repo.git"), &["log", "--format=%s", "main"]), "first\n");
    // A line with another command beside the push gets no grant: the push has no route.
    let r = run(&["--approve", "exec:git push"], &["/bin/sh", "-c", &format!("git push -q {url} main:other && ls >/dev/null")]);
    assert_ne!(r.status, 0, "{}", r.stderr);
    let branches = git(&f.path("remote/repo.git"), &["branch", "--format=%(refname:short)"]);
    assert_eq!(branches, "main\n");
    // And the grant does not outlive the push: the next command has no route again.
    let r = run(&[], &["git", "ls-remote", &url]);
    assert_ne!(r.status, 0, "{}", r.stdout);
}

#[test]
fn a_write_grant_opens_its_folder_for_that_command_alone() {
    let f = Fixture::new();
    f.file(
        "policy.yaml",
        "version: 1\nsandbox:\n  paths:\n    portfolio: { root: ./portfolio, mode: rw, write_approval: true }\n  shell:\n    rules:\n      \
         - { prefix: [touch], decision: allow, grant: { write: [/portfolio/out] } }\n",
    );
    let r = exec(&f, &[], &["touch", "out/made"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(f.path("portfolio/out/made").exists());
    // Outside the granted folder the mount stays as nobody approved it: read-only.
    let r = exec(&f, &[], &["touch", "made"]);
    assert_ne!(r.status, 0);
    assert!(!f.path("portfolio/made").exists());
    // A line with a command the rule does not grant gets no grant at all.
    let r = exec(&f, &[], &["/bin/sh", "-c", "touch out/again && cp /dev/null out/copy"]);
    assert_ne!(r.status, 0);
    assert!(!f.path("portfolio/out/again").exists());
    // Nor does the next command.
    let r = exec(&f, &[], &["cp", "/dev/null", "out/copy"]);
    assert_ne!(r.status, 0);
    assert!(!f.path("portfolio/out/copy").exists());
}

#[test]
fn an_answer_given_in_advance_never_covers_a_program_that_may_be_another() {
    let f = fixture();
    for command in [&["./git", "push"][..], &["/bin/sh", "-c", "PATH=/tmp/evil:$PATH git push"][..]] {
        let r = exec(&f, &["--approve", "exec:git push"], command);
        assert_eq!((r.status, r.stderr.ends_with("the user declined it.\n")), (126, true), "{command:?}: {}", r.stderr);
    }
}
