//! A command as the rules see it: words known exactly, and words that a
//! shell would only know when it runs (an expansion, a glob).

/// One word of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// Known exactly: a word with its quotes and escapes taken away.
    Word(String),
    /// Known only when the command runs (`$X`, `*.md`, `{a,b}`): it may stand for
    /// any words, any number of them, so nothing after it is known either.
    Unknown(String),
}

impl Token {
    pub fn word(&self) -> Option<&str> {
        match self {
            Token::Word(w) => Some(w),
            Token::Unknown(_) => None,
        }
    }

    /// The word as it was written, or as it is known.
    pub fn shown(&self) -> &str {
        match self {
            Token::Word(w) | Token::Unknown(w) => w,
        }
    }
}

/// A simple command, its wrappers seen through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    pub tokens: Vec<Token>,
    /// The program may not be the one its name says: named by a path outside
    /// the system folders (`./git`), or run after `PATH`, `LD_PRELOAD` and the
    /// like were changed. Rules that allow it by name do not apply.
    pub program_uncertain: bool,
    /// `PATH`, `LD_*`... set for this command and what it runs.
    pub lookup_changed: bool,
    /// Run through `sudo` or `doas`: never allowed without a person.
    pub elevated: bool,
    /// The wrappers seen through, outermost first (`env`, `timeout`, `git -C`).
    pub seen_through: Vec<String>,
}

impl Command {
    pub fn of_words<S: AsRef<str>>(words: &[S]) -> Command {
        Command {
            tokens: words.iter().map(|w| Token::Word(w.as_ref().to_owned())).collect(),
            program_uncertain: false,
            lookup_changed: false,
            elevated: false,
            seen_through: Vec::new(),
        }
    }

    /// Whether the command is surely what its words say: its program the one
    /// its name says, and every word known. Only such a command gets a grant,
    /// or is answered by an answer given for its prefix.
    pub fn is_certain(&self) -> bool {
        !self.program_uncertain && self.tokens.iter().all(|t| matches!(t, Token::Word(_)))
    }

    /// The words, shell-quoted where needed, unknown ones as written.
    pub fn shown(&self) -> String {
        self.tokens.iter().map(|t| match t {
            Token::Word(w) => quoted(w),
            Token::Unknown(w) => w.clone(),
        }).collect::<Vec<_>>().join(" ")
    }
}

/// `word` as a shell would read it back: bare when safe, else single-quoted.
pub fn quoted(word: &str) -> String {
    let safe = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
    if safe { word.to_owned() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

/// Variables that change which program a name runs, or what runs inside it
/// (git's many: `GIT_SSH_COMMAND`, `GIT_EXTERNAL_DIFF`, `GIT_CONFIG_*`...).
pub fn changes_lookup(name: &str) -> bool {
    name.starts_with("LD_") || name.starts_with("GIT_") || name.starts_with("BASH_FUNC_") || matches!(name, "PATH" | "SHELLOPTS" | "BASHOPTS" | "IFS")
}

/// Variables whose value bash (or git) runs, or reads commands or settings
/// from: setting one is unparsed. Git's: all but those that name a person, a
/// folder or a prompt's absence.
pub fn runs_its_value(name: &str) -> bool {
    const GIT_HARMLESS: [&str; 9] = [
        "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE", "GIT_DIR", "GIT_WORK_TREE", "GIT_TERMINAL_PROMPT",
    ];
    matches!(
        name,
        "BASH_ENV" | "ENV" | "PS1" | "PS2" | "PS3" | "PS4" | "PROMPT_COMMAND" | "NODE_OPTIONS" | "PERL5OPT" | "PERL5DB" | "RUBYOPT"
            | "PYTHONSTARTUP" | "PYTHONINSPECT" | "JAVA_TOOL_OPTIONS" | "_JAVA_OPTIONS"
    )
        || name.starts_with("BASH_FUNC_")
        || (name.starts_with("GIT_") && !GIT_HARMLESS.contains(&name))
}

/// The variable a `NAME=VALUE` word sets, when it is one.
pub fn assigned(word: &str) -> Option<&str> {
    word.split_once('=').map(|(name, _)| name).filter(|n| !n.is_empty() && n.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()))
}
