//! A command line or script split into the commands the rules judge.

use crate::command::{assigned, changes_lookup, runs_its_value, Command, Token};

/// How deep `bash -c 'sh -c "..."'` and `eval` may nest before the rest is unparsed.
pub const MAX_DEPTH: usize = 8;

/// A simple command as the script wrote it.
#[derive(Debug, Default)]
pub struct RawCommand {
    /// `NAME=VALUE` words before the program.
    pub assignments: Vec<String>,
    pub tokens: Vec<Token>,
}

/// Whether a part is a command of its own or a wrapper around one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// Judged by the rules, and by `unmatched` when none names it.
    Command,
    /// `env`, `timeout`, `bash -c`, `xargs`...: the command inside is judged;
    /// the wrapper only by rules that name it.
    Wrapper,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub command: Command,
    pub layer: Layer,
}

/// The commands found, and why any of the script could not be read.
#[derive(Debug, Default)]
pub struct Split {
    pub parts: Vec<Part>,
    pub unparsed: Vec<String>,
    /// What the commands being split now run inside: wrappers, `sudo`.
    inside: Vec<String>,
    elevated: bool,
    /// An earlier statement (or the caller) set `PATH`, `LD_PRELOAD`...: no
    /// later program is surely the one its name says.
    lookup_changed: bool,
    /// The script is read by bash, not `/bin/sh` (dash, busybox): syntax
    /// only bash has (`&>`, `<<<`, `|&`) means something else to sh.
    pub(crate) bash: bool,
}

impl Split {
    pub fn of_argv<S: AsRef<str>>(argv: &[S]) -> Split {
        let mut split = Split::default();
        let tokens = argv.iter().map(|w| Token::Word(w.as_ref().to_owned())).collect();
        split.command(RawCommand { assignments: Vec::new(), tokens }, 0);
        split
    }

    pub fn of_script(script: &str) -> Split {
        let mut split = Split::default();
        crate::script::split_script(script, 0, &mut split);
        split
    }

    pub fn unparsed(&mut self, reason: String) {
        if !self.unparsed.contains(&reason) {
            self.unparsed.push(reason);
        }
    }

    /// Adds `raw`, seen through its wrappers.
    pub fn command(&mut self, raw: RawCommand, depth: usize) {
        let lookup_changed = self.lookup_changed || raw.assignments.iter().any(|a| assigned(a).is_some_and(changes_lookup));
        for name in raw.assignments.iter().filter_map(|a| assigned(a)).filter(|n| runs_its_value(n)) {
            self.unparsed(format!("{name} is set, whose value bash runs or reads commands from"));
        }
        let mut command = Command {
            tokens: raw.tokens,
            program_uncertain: false,
            lookup_changed,
            elevated: self.elevated,
            seen_through: self.inside.clone(),
        };
        command.seen_through.extend(raw.assignments);
        if command.tokens.is_empty() {
            return;
        }
        crate::unwrap::see_through(command, depth, self);
    }

    pub fn push(&mut self, command: Command, layer: Layer) {
        self.parts.push(Part { command, layer });
    }

    /// Splits `script`, run by `outer`, with what `outer` runs inside. In
    /// `same_shell` (`eval`), what it changes (a `PATH`) holds after it too.
    pub fn nested_script(&mut self, script: &str, outer: &Command, depth: usize, same_shell: bool) {
        if depth >= MAX_DEPTH {
            return self.unparsed(format!("scripts nested more than {MAX_DEPTH} deep"));
        }
        let saved = (std::mem::replace(&mut self.inside, outer.seen_through.clone()), self.elevated, self.lookup_changed, self.bash);
        self.inside.push(outer.shown());
        self.elevated = outer.elevated;
        // A shell named by a path (`./sh`) may run anything: nothing it runs is certain.
        self.lookup_changed = outer.lookup_changed || outer.program_uncertain;
        if !same_shell {
            self.bash = outer.tokens.first().and_then(Token::word).is_some_and(|p| p == "bash" || p == "rbash");
        }
        crate::script::split_script(script, depth + 1, self);
        let changed = self.lookup_changed;
        (self.inside, self.elevated, self.lookup_changed, self.bash) = saved;
        self.lookup_changed |= same_shell && changed;
    }

    /// A statement set `name` for the rest of the script.
    pub fn assigns(&mut self, name: &str) {
        self.lookup_changed |= changes_lookup(name);
        if runs_its_value(name) {
            self.unparsed(format!("{name} is set, whose value bash runs or reads commands from"));
        }
    }
}
