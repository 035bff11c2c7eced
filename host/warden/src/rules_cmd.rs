//! `warden rules check`: a command judged under a policy's rules, shown.

use serde_json::{json, Value};
use warden_fs::approval::granted_shown;
use warden_policy::{CommandRules, Network};
use warden_rules::Judgement;

use crate::cli::RulesCheckArgs;
use crate::exit::Failure;

pub fn check(args: &RulesCheckArgs) -> Result<(), Failure> {
    let policy = warden_policy::load(&args.policy)?;
    if let Some(worker) = &args.worker
        && !policy.workers.contains_key(worker)
    {
        return Err(Failure::usage(format!("unknown worker '{worker}'")));
    }
    let Some(rules) = policy.command_rules_for(args.worker.as_deref()) else {
        return Err(Failure::usage(format!("{} has no command rules (`shell: {{ rules: [...] }}`): every command runs", policy.file.display())));
    };
    let judged = match &args.script {
        Some(script) => rules.set.judge_script(script),
        None => rules.set.judge_argv(&args.command),
    };
    let grant = rules.granted(&judged, &Network::Off).map(|g| granted_shown(&g));
    if args.json {
        println!("{}", serde_json::to_string_pretty(&as_json(rules, &judged, grant.as_deref())).expect("values serialize"));
    } else {
        print!("{}", as_text(rules, &judged, grant.as_deref()));
    }
    match &args.expect {
        Some(expected) if expected != judged.decision.as_str() => {
            Err(Failure { status: Failure::FAILED, message: format!("warden: expected {expected}, the rules say {}", judged.decision) })
        }
        _ => Ok(()),
    }
}

fn rule_json(rules: &CommandRules, index: usize) -> Value {
    let rule = &rules.set.rules()[index];
    json!({
        "index": index,
        "prefix": rule.shown(),
        "decision": rule.decision,
        "justification": rule.justification,
        "line": rules.places[index].map(|p| p.0),
        "column": rules.places[index].map(|p| p.1),
        "worker": rules.owners[index],
    })
}

fn as_json(rules: &CommandRules, judged: &Judgement, grant: Option<&str>) -> Value {
    let commands: Vec<Value> = judged
        .commands
        .iter()
        .map(|c| {
            json!({
                "command": c.command,
                "inside": c.inside,
                "wrapper": c.wrapper,
                "decision": c.decision,
                "by": c.by,
                "rules": c.rules.iter().map(|&i| rule_json(rules, i)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "decision": judged.decision, "commands": commands, "unparsed": judged.unparsed, "grant": grant })
}

fn as_text(rules: &CommandRules, judged: &Judgement, grant: Option<&str>) -> String {
    let mut out = format!("decision: {}\n", judged.decision);
    for c in &judged.commands {
        let decision = c.decision.map_or("-", |d| d.as_str());
        let kind = if c.wrapper { " (wrapper)" } else { "" };
        out.push_str(&format!("  {decision:<6} {}{kind}\n", c.command));
        if !c.inside.is_empty() {
            out.push_str(&format!("         inside: {}\n", c.inside.join(" > ")));
        }
        for &i in &c.rules {
            let rule = &rules.set.rules()[i];
            let place = rules.places[i].map(|(l, col)| format!(" (line {l}, column {col})")).unwrap_or_default();
            let why = rule.justification.as_deref().map(|j| format!(": {j}")).unwrap_or_default();
            out.push_str(&format!("         rule {i}{place}: {} {}{why}\n", rule.decision, rule.shown()));
        }
        if c.by == "unmatched" && c.decision.is_some() {
            out.push_str(&format!("         no rule names it: unmatched is {}\n", rules.set.unmatched));
        }
        if c.by == "sudo" {
            out.push_str("         run through sudo: never allowed without a person\n");
        }
    }
    for reason in &judged.unparsed {
        out.push_str(&format!("  unparsed ({}): {reason}\n", rules.set.unparsed));
    }
    if let Some(grant) = grant {
        out.push_str(&format!("  granted, for this command only: {grant}\n"));
    }
    out
}
