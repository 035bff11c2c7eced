//! Seeing through what runs a command: `env` and `VAR=` prefixes, `timeout`,
//! `nice`, `nohup`, `command`, `time`, `exec`, `sudo`, `xargs`, `find -exec`,
//! `busybox`, `bash -c`, `eval`, a program named by a system path, and git's
//! global options.

use crate::command::{assigned, changes_lookup, Command, Token};
use crate::split::{Layer, Split};

/// Folders whose programs are the ones their names say.
const SYSTEM_FOLDERS: [&str; 6] = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin", "/usr/local/sbin"];

const SHELLS: [&str; 9] = ["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish"];

/// Options a wrapper takes before the command it runs.
struct Options {
    /// Single-letter options without a value.
    flags: &'static str,
    /// Single-letter options that take one.
    valued: &'static str,
    long_flags: &'static [&'static str],
    long_valued: &'static [&'static str],
    /// `NAME=VALUE` words may come among the options (`env`).
    assignments: bool,
    /// `-10` is an option (`nice`).
    numeric: bool,
    /// Words after the options before the command (`timeout`'s duration).
    positionals: usize,
}

const NONE: Options = Options { flags: "", valued: "", long_flags: &[], long_valued: &[], assignments: false, numeric: false, positionals: 0 };

fn wrapper_options(program: &str) -> Option<Options> {
    Some(match program {
        "env" => Options {
            flags: "i0v",
            valued: "uC",
            long_flags: &["ignore-environment", "null", "debug"],
            long_valued: &["unset", "chdir"],
            assignments: true,
            ..NONE
        },
        "timeout" => Options { flags: "v", valued: "sk", long_flags: &["preserve-status", "foreground", "verbose"], long_valued: &["signal", "kill-after"], positionals: 1, ..NONE },
        "nice" => Options { valued: "n", long_valued: &["adjustment"], numeric: true, ..NONE },
        "nohup" | "busybox" => NONE,
        "command" => Options { flags: "p", ..NONE },
        "time" => Options { flags: "pvaq", valued: "fo", long_flags: &["portability", "verbose", "append", "quiet"], long_valued: &["format", "output"], ..NONE },
        "exec" => Options { flags: "cl", valued: "a", ..NONE },
        "sudo" => Options {
            flags: "AbEHnPSkKlV",
            valued: "CDghpRrtTuU",
            long_flags: &["askpass", "background", "preserve-env", "set-home", "non-interactive", "preserve-groups", "stdin", "reset-timestamp", "remove-timestamp"],
            long_valued: &["close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type", "command-timeout", "user", "other-user"],
            ..NONE
        },
        "doas" => Options { flags: "nL", valued: "uC", ..NONE },
        "xargs" => Options {
            flags: "0ortpx",
            valued: "adEeIiLlnPs",
            long_flags: &["null", "no-run-if-empty", "open-tty", "verbose", "interactive", "exit", "show-limits"],
            long_valued: &["arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"],
            ..NONE
        },
        _ => return None,
    })
}

/// Where the command a wrapper runs starts: `None` when it runs none.
fn skip_options(tokens: &[Token], options: &Options) -> Result<Option<usize>, String> {
    let mut i = 1;
    while i < tokens.len() {
        let Token::Word(word) = &tokens[i] else {
            return Err(format!("an option known only when it runs: {}", tokens[i].shown()));
        };
        if word == "--" {
            i += 1;
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            if options.long_flags.contains(&name) {
                i += 1;
            } else if options.long_valued.contains(&name) {
                i += if has_value { 1 } else { 2 };
            } else {
                return Err(format!("an option Warden does not know: {word}"));
            }
            continue;
        }
        if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) {
            if options.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
                i += 1;
                continue;
            }
            let mut consumed = 1;
            for (at, letter) in cluster.char_indices() {
                if options.flags.contains(letter) {
                    continue;
                }
                if options.valued.contains(letter) {
                    if at + letter.len_utf8() == cluster.len() {
                        consumed = 2;
                    }
                    break;
                }
                return Err(format!("an option Warden does not know: {word}"));
            }
            i += consumed;
            continue;
        }
        if options.assignments && assigned(word).is_some() {
            i += 1;
            continue;
        }
        break;
    }
    for _ in 0..options.positionals {
        match tokens.get(i) {
            Some(Token::Word(_)) => i += 1,
            Some(unknown) => return Err(format!("an argument known only when it runs: {}", unknown.shown())),
            None => return Ok(None),
        }
    }
    Ok((i < tokens.len()).then_some(i))
}

/// Adds `command` to `split` as the rules should see it, with every layer
/// it was wrapped in.
pub fn see_through(mut command: Command, depth: usize, split: &mut Split) {
    loop {
        let Some(Token::Word(program)) = command.tokens.first().cloned() else {
            split.unparsed(format!("the program is known only when it runs: {}", command.shown()));
            return split.push(command, Layer::Command);
        };
        let name = name_program(&mut command, &program);
        if let Some(options) = wrapper_options(&name) {
            match skip_options(&command.tokens, &options) {
                Err(reason) => {
                    split.unparsed(format!("{name}: {reason}"));
                    return split.push(command, Layer::Command);
                }
                Ok(None) => return split.push(command, Layer::Command),
                Ok(Some(start)) => {
                    let mut inner = command.tokens[start..].to_vec();
                    if name == "env" {
                        command.lookup_changed |= command.tokens[1..start].iter().any(|t| t.word().and_then(assigned).is_some_and(changes_lookup));
                    }
                    if name == "xargs" {
                        inner = xargs_command(&command.tokens[1..start], inner);
                    }
                    split.push(command.clone(), Layer::Wrapper);
                    command.elevated |= name == "sudo" || name == "doas";
                    let wrapper = shown(&command.tokens[..start]);
                    command.seen_through.push(wrapper);
                    command.tokens = inner;
                    command.program_uncertain = false;
                    continue;
                }
            }
        }
        match name.as_str() {
            "git" => {
                match git_globals(&command.tokens) {
                    Ok(Some(rest)) => {
                        command.seen_through.push(format!("git {}", shown(&command.tokens[1..rest])));
                        command.tokens.drain(1..rest);
                    }
                    Ok(None) => {}
                    Err(reason) => split.unparsed(format!("git: {reason}")),
                }
                return split.push(command, Layer::Command);
            }
            "eval" => {
                let words: Option<Vec<&str>> = command.tokens[1..].iter().map(Token::word).collect();
                let Some(words) = words else {
                    split.unparsed(format!("eval of words known only when it runs: {}", command.shown()));
                    return split.push(command, Layer::Command);
                };
                let script = words.join(" ");
                split.push(command.clone(), Layer::Wrapper);
                return split.nested_script(&script, &command, depth);
            }
            "find" => {
                let inner = find_commands(&command.tokens);
                split.push(command.clone(), Layer::Command);
                for tokens in inner {
                    let mut run = command.clone();
                    run.seen_through.push("find -exec".to_owned());
                    run.tokens = tokens;
                    run.program_uncertain = false;
                    see_through(run, depth, split);
                }
                return;
            }
            shell if SHELLS.contains(&shell) => return shell_command(command, depth, split),
            "source" | "." => split.unparsed(format!("{name} runs a script Warden cannot read, in the shell itself: {}", command.shown())),
            "alias" | "unalias" | "hash" | "enable" => split.unparsed(format!("{name} changes what a command name runs: {}", command.shown())),
            "shopt" => split.unparsed(format!("shopt changes how the shell reads the words that follow: {}", command.shown())),
            _ => {}
        }
        if let Some(reason) = interpreter_reason(&name, &command.tokens) {
            split.unparsed(reason);
        }
        return split.push(command, Layer::Command);
    }
}

/// The program's name as the rules know it: `/usr/bin/git` is `git`; a
/// program named by another path (`./git`) keeps its name but may be anything.
fn name_program(command: &mut Command, program: &str) -> String {
    command.program_uncertain |= command.lookup_changed;
    let Some((folder, name)) = program.rsplit_once('/') else { return program.to_owned() };
    let folder = if folder.is_empty() { "/" } else { folder };
    if SYSTEM_FOLDERS.contains(&folder) && !name.is_empty() {
        command.seen_through.push(program.to_owned());
    } else {
        command.program_uncertain = true;
    }
    command.tokens[0] = Token::Word(name.to_owned());
    name.to_owned()
}

fn shown(tokens: &[Token]) -> String {
    Command { tokens: tokens.to_vec(), program_uncertain: false, lookup_changed: false, elevated: false, seen_through: Vec::new() }.shown()
}

/// The command `xargs` runs: its words, then the words it reads.
fn xargs_command(options: &[Token], mut inner: Vec<Token>) -> Vec<Token> {
    let replace = options.windows(2).find_map(|w| match (&w[0], &w[1]) {
        (Token::Word(flag), Token::Word(value)) if flag == "-I" => Some(value.clone()),
        _ => None,
    });
    match replace {
        Some(mark) => {
            for token in &mut inner {
                if token.word().is_some_and(|w| w.contains(&mark)) {
                    *token = Token::Unknown(token.shown().to_owned());
                }
            }
        }
        None => inner.push(Token::Unknown("(words read by xargs)".into())),
    }
    inner
}

/// The commands of `find`'s `-exec`, `-execdir`, `-ok` and `-okdir`, with `{}` unknown.
fn find_commands(tokens: &[Token]) -> Vec<Vec<Token>> {
    let mut commands = Vec::new();
    let mut i = 1;
    while i < tokens.len() {
        let starts = tokens[i].word().is_some_and(|w| matches!(w, "-exec" | "-execdir" | "-ok" | "-okdir"));
        i += 1;
        if !starts {
            continue;
        }
        let mut run = Vec::new();
        while i < tokens.len() && !tokens[i].word().is_some_and(|w| w == ";" || w == "+") {
            run.push(match &tokens[i] {
                Token::Word(w) if w.contains("{}") => Token::Unknown(w.clone()),
                other => other.clone(),
            });
            i += 1;
        }
        if !run.is_empty() {
            commands.push(run);
        }
    }
    commands
}

/// Where git's subcommand starts after its global options; `None` when there are none.
fn git_globals(tokens: &[Token]) -> Result<Option<usize>, String> {
    const FLAGS: [&str; 14] = [
        "-P", "-p", "--paginate", "--no-pager", "--bare", "--no-replace-objects", "--literal-pathspecs",
        "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-advice",
        "--no-lazy-fetch", "--exec-path",
    ];
    const VALUED: [&str; 7] = ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"];
    let mut i = 1;
    while let Some(token) = tokens.get(i) {
        let Token::Word(word) = token else {
            return Err(format!("a global option known only when it runs: {}", token.shown()));
        };
        let (name, inline) = match word.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (word.as_str(), None),
        };
        if FLAGS.contains(&name) {
            i += 1;
        } else if VALUED.contains(&name) {
            let value = match inline {
                Some(v) => Some(v.to_owned()),
                None => tokens.get(i + 1).and_then(|t| t.word()).map(str::to_owned),
            };
            let Some(value) = value else {
                return Err(format!("the value of {name} is known only when it runs"));
            };
            if matches!(name, "-c" | "--config-env") && value.to_ascii_lowercase().starts_with("alias.") {
                return Err(format!("{name} {value} defines a command of its own"));
            }
            i += if inline.is_some() { 1 } else { 2 };
        } else if word.starts_with('-') {
            return Err(format!("a global option Warden does not know: {word}"));
        } else {
            break;
        }
    }
    Ok((i > 1).then_some(i))
}

/// `bash -c SCRIPT` is judged by the script; a shell reading its commands
/// from standard input cannot be judged at all.
fn shell_command(command: Command, depth: usize, split: &mut Split) {
    let name = command.tokens[0].shown().to_owned();
    let mut inline = false;
    let mut i = 1;
    while let Some(token) = command.tokens.get(i) {
        let Token::Word(word) = token else {
            split.unparsed(format!("{name}: an option known only when it runs: {}", token.shown()));
            return split.push(command, Layer::Command);
        };
        match word.as_str() {
            "--" => {
                i += 1;
                break;
            }
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file" => i += 2,
            w if w.starts_with("--") => i += 1,
            w if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 => {
                inline |= w.contains('c');
                if w.contains('s') || w.contains('i') {
                    split.unparsed(format!("{name} reads its commands from standard input"));
                    return split.push(command, Layer::Command);
                }
                i += 1;
            }
            _ => break,
        }
    }
    match (inline, command.tokens.get(i)) {
        (true, Some(Token::Word(script))) => {
            let script = script.clone();
            split.push(command.clone(), Layer::Wrapper);
            split.nested_script(&script, &command, depth);
        }
        (true, Some(unknown)) => {
            split.unparsed(format!("{name} -c runs a script known only when it runs: {}", unknown.shown()));
            split.push(command, Layer::Command);
        }
        (true, None) => {
            split.unparsed(format!("{name} -c without a script"));
            split.push(command, Layer::Command);
        }
        (false, None) if !command.tokens[1..].iter().any(|t| t.word().is_some_and(|w| w == "--version" || w == "--help")) => {
            split.unparsed(format!("{name} reads its commands from standard input"));
            split.push(command, Layer::Command);
        }
        // A script file: judged as the command it is.
        _ => split.push(command, Layer::Command),
    }
}

/// Why an interpreter's command cannot be judged by what it runs: code on
/// its command line, or read from standard input.
fn interpreter_reason(name: &str, tokens: &[Token]) -> Option<String> {
    let (inline, long): (&str, &[&str]) = match name {
        n if n.starts_with("python") || n.starts_with("pypy") => ("c", &[]),
        "node" | "nodejs" | "bun" => ("ep", &["--eval", "--print"]),
        "perl" | "ruby" | "lua" | "luajit" | "Rscript" | "osascript" => ("eE", &[]),
        "php" => ("rRBE", &[]),
        "deno" => return tokens.get(1).and_then(Token::word).filter(|w| *w == "eval").map(|_| "deno eval runs code Warden cannot read".into()),
        _ => return None,
    };
    let mut script = false;
    for token in &tokens[1..] {
        match token {
            Token::Word(w) if long.contains(&w.as_str()) => return Some(format!("{name} {w} runs code Warden cannot read")),
            Token::Word(w) if w == "--version" || w == "--help" || w == "-V" || w == "-h" => return None,
            Token::Word(w) if w == "-m" => return None,
            Token::Word(w) if w.starts_with('-') && !w.starts_with("--") && w.len() > 1 => {
                if w[1..].chars().any(|c| inline.contains(c)) {
                    return Some(format!("{name} {w} runs code Warden cannot read"));
                }
            }
            Token::Word(w) if w.starts_with("--") => {}
            Token::Word(w) if w == "-" => break,
            _ => {
                script = true;
                break;
            }
        }
    }
    (!script).then(|| format!("{name} reads its program from standard input"))
}
