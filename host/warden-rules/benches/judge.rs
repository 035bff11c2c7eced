//! Judging a 200-character script against 100 rules: the issue asks for under 50 µs.

use criterion::{criterion_group, criterion_main, Criterion};
use warden_rules::{Decision, Rule, RuleSet};

fn hundred_rules() -> RuleSet {
    let programs = ["git", "npm", "cargo", "docker", "kubectl", "python3", "make", "rm", "curl", "ls"];
    let subcommands = ["push", "status", "build", "run", "test", "install", "exec", "apply", "-rf", "log"];
    let decisions = [Decision::Allow, Decision::Ask, Decision::Forbid];
    let mut rules = Vec::new();
    for (p, program) in programs.iter().enumerate() {
        for (s, sub) in subcommands.iter().enumerate() {
            rules.push(Rule {
                prefix: vec![vec![program.to_string()], vec![sub.to_string(), format!("{sub}-x")]],
                exact: false,
                decision: decisions[(p + s) % 3],
                justification: Some("benchmark".into()),
            });
        }
    }
    RuleSet::new(rules, Decision::Allow, Decision::Ask)
}

/// 200 characters: a list, a pipeline, wrappers, a nested `bash -c`.
const SCRIPT: &str = "cd /project && env CI=1 timeout 60 cargo test --workspace -q 2>&1 | tail -n 20; git -C /project status --short && bash -lc 'npm run build && ls dist' || echo \"build failed: see log\" > buildout.txt >&2";

fn judge(c: &mut Criterion) {
    assert_eq!(SCRIPT.len(), 200);
    let rules = hundred_rules();
    assert!(rules.judge_script(SCRIPT).unparsed.is_empty());
    c.bench_function("judge a 200-character script against 100 rules", |b| b.iter(|| rules.judge_script(std::hint::black_box(SCRIPT))));
    c.bench_function("split the script only", |b| b.iter(|| warden_rules::Split::of_script(std::hint::black_box(SCRIPT))));
    let argv = ["git", "-C", "/project", "push", "origin", "main"];
    c.bench_function("judge an argv against 100 rules", |b| b.iter(|| rules.judge_argv(std::hint::black_box(&argv))));
}

criterion_group!(benches, judge);
criterion_main!(benches);
