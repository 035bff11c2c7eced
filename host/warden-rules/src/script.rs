//! Splitting a shell script into its simple commands with bash's grammar
//! (tree-sitter-bash). Plain commands joined by `&&`, `||`, `;`, `|` and `&`
//! are split and each is judged; whatever else a script holds is noted as
//! unparsed, and the commands found inside it are judged too.

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

use crate::command::Token;
use crate::split::{RawCommand, Split};

/// Scripts longer than this are not read at all.
pub const MAX_SCRIPT_BYTES: usize = 64 * 1024;

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new({
        let mut parser = Parser::new();
        parser.set_language(&tree_sitter_bash::LANGUAGE.into()).expect("the bash grammar matches tree-sitter");
        parser
    });
}

/// Adds the commands of `script` to `split`, each seen through by `split`.
pub fn split_script(script: &str, depth: usize, split: &mut Split) {
    if script.len() > MAX_SCRIPT_BYTES {
        return split.unparsed(format!("the script is longer than {MAX_SCRIPT_BYTES} bytes"));
    }
    if script.contains('\0') {
        return split.unparsed("the script holds a NUL byte".into());
    }
    // Bash joins `g\<newline>it` into one word before it reads the script; the grammar sees two.
    let bytes = script.as_bytes();
    let joins = (1..bytes.len().saturating_sub(1)).any(|i| {
        // A blank before it ends the word, unless that blank is escaped itself (`a\ \<newline>b`).
        let blank_before = bytes[i - 1].is_ascii_whitespace() && !(i >= 2 && bytes[i - 2] == b'\\');
        bytes[i] == b'\\' && bytes[i + 1] == b'\n' && !blank_before && bytes.get(i + 2).is_some_and(|b| !b.is_ascii_whitespace())
    });
    if joins {
        split.unparsed("a line break inside a word (backslash-newline), which bash joins".into());
    }
    // The grammar reads backslash, CR, LF as a line continuation; bash, as an escaped CR and a new line.
    if script.contains("\\\r") {
        split.unparsed("a backslash before a carriage return, which bash and the grammar read apart".into());
    }
    let Some(tree) = PARSER.with(|p| p.borrow_mut().parse(script, None)) else {
        return split.unparsed("the script could not be parsed".into());
    };
    let root = tree.root_node();
    if root.has_error() {
        split.unparsed("the script is not valid shell syntax".into());
    }
    Walker { src: script.as_bytes(), depth, split }.statement(root);
}

struct Walker<'a, 's> {
    src: &'a [u8],
    depth: usize,
    split: &'s mut Split,
}

impl Walker<'_, '_> {
    fn text(&self, node: Node) -> &str {
        node.utf8_text(self.src).unwrap_or("")
    }

    fn statement(&mut self, node: Node) {
        match node.kind() {
            "program" | "list" | "pipeline" | "negated_command" => {
                // Also refuses `;;`, which bash refuses outside a case statement and tree-sitter lets pass.
                self.each_child(node, |walker, child| walker.statement(child));
            }
            "comment" => self.comment(node),
            "&&" | "||" | ";" | "|" | "|&" | "&" | "!" | ";;" => {}
            "command" => self.command(node, &[]),
            "redirected_statement" => {
                let (mut body, mut words) = (None, Vec::new());
                self.each_child(node, |walker, child| match child.kind() {
                    "file_redirect" | "heredoc_redirect" | "herestring_redirect" => words.extend(walker.redirect(child)),
                    _ if body.is_none() => body = Some(child),
                    _ => walker.statement(child),
                });
                match body {
                    Some(body) if body.kind() == "command" => self.command(body, &words),
                    Some(body) => {
                        if !words.is_empty() {
                            self.split.unparsed(format!("words after a redirection of {}", first_line(self.text(body))));
                        }
                        self.statement(body);
                    }
                    None => {}
                }
            }
            "variable_assignment" | "variable_assignments" => {
                self.substitutions(node);
                self.note_assignments(node);
            }
            "declaration_command" | "unset_command" => {
                self.note_assignments(node);
                self.declaration(node);
            }
            "command_substitution" | "process_substitution" => {
                let what = if node.kind() == "command_substitution" { "a command substitution" } else { "a process substitution" };
                self.split.unparsed(format!("{what}: {}", self.text(node)));
                self.children(node);
            }
            kind => {
                let what = match kind {
                    "subshell" => "a subshell",
                    "compound_statement" => "a command group",
                    "if_statement" | "elif_clause" | "else_clause" => "an if statement",
                    "for_statement" | "c_style_for_statement" => "a for loop",
                    "while_statement" => "a while loop",
                    "case_statement" | "case_item" => "a case statement",
                    "function_definition" => "a function definition",
                    "test_command" => "a test",
                    "ERROR" => "text that is not valid shell syntax",
                    _ => "a construct other than plain commands",
                };
                self.split.unparsed(format!("{what}: {}", first_line(self.text(node))));
                self.children(node);
            }
        }
    }

    /// The shell ends a heredoc at its delimiter with the quotes taken away
    /// (`true""` ends at `true`); the grammar, at the word as written. A
    /// delimiter that is not one plain word, whole or wholly quoted, is unparsed.
    fn heredoc_delimiter(&mut self, redirect: Node, start: Node) {
        let text = self.text(start);
        let plain = |w: &str| !w.is_empty() && !w.contains(['\'', '"', '\\', '$', '`']);
        let fully_quoted = |q: char| text.len() >= 2 && text.starts_with(q) && text.ends_with(q) && plain(&text[1..text.len() - 1]);
        let escaped = text.strip_prefix('\\').is_some_and(plain);
        if !(plain(text) || fully_quoted('\'') || fully_quoted('"') || escaped) {
            self.split.unparsed(format!("a heredoc whose delimiter the shell reads otherwise: {}", first_line(self.text(redirect))));
        }
    }

    /// A comment ends at its line in bash, backslash or not; the grammar runs
    /// one that ends in a backslash on into the next line.
    fn comment(&mut self, node: Node) {
        if self.text(node).ends_with('\\') {
            self.split.unparsed(format!("a comment that ends in a backslash: {}", self.text(node)));
        }
    }

    /// Calls `visit` with each named child of `node`, and checks on the way
    /// that text inside `node` none of its children covers is blank: where
    /// the grammar skipped something else (it drops a leading `\ `, which
    /// bash reads as a word of its own), bash may read a word it did not.
    fn each_child<'t>(&mut self, node: Node<'t>, mut visit: impl FnMut(&mut Self, Node<'t>)) {
        let mut at = node.start_byte();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            self.check_blank(at, child.start_byte());
            at = child.end_byte();
            if child.is_named() {
                visit(self, child);
                continue;
            }
            let kind = child.kind();
            // An operator that took more text than itself (`-C<<` read as `<<`).
            if self.text(child) != kind {
                self.split.unparsed(format!("text the grammar does not read as bash does: {:?}", self.text(child)));
            }
            if kind == ";;" && node.kind() != "case_item" {
                self.split.unparsed("text that is not valid shell syntax: ;;".into());
            }
            if !self.split.bash && matches!(kind, "&>" | "&>>" | "<<<" | "|&") {
                self.split.unparsed(format!("{kind}, which sh (dash) reads otherwise than bash: {}", first_line(self.text(node))));
            }
        }
        self.check_blank(at, node.end_byte());
    }

    fn check_blank(&mut self, from: usize, to: usize) {
        let text = &self.src[from.min(to)..to];
        let blank = text.iter().enumerate().all(|(i, &b)| match b {
            b' ' | b'\t' | b'\n' | b'\r' => true,
            b'\\' => text.get(i + 1) == Some(&b'\n'),
            _ => false,
        });
        if !blank {
            let skipped = String::from_utf8_lossy(text).into_owned();
            self.split.unparsed(format!("text the grammar does not read as bash does: {skipped:?}"));
        }
    }

    fn children(&mut self, node: Node) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.statement(child);
        }
    }

    /// Notes the variables `node` (an assignment, or `export A=1 B`) sets for the rest of the script.
    fn note_assignments(&mut self, node: Node) {
        if node.kind() == "variable_assignment" || node.kind() == "variable_name" {
            let name = node.child_by_field_name("name").unwrap_or(node);
            let name = self.text(name).to_owned();
            return self.split.assigns(&name);
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if matches!(child.kind(), "variable_assignment" | "variable_name") {
                self.note_assignments(child);
            }
        }
    }

    /// Judges the commands inside substitutions at or anywhere below `node`.
    fn substitutions(&mut self, node: Node) {
        // Most words hold none: a look at their text spares walking their nodes.
        let text = &self.src[node.start_byte()..node.end_byte()];
        if !text.windows(2).any(|w| matches!(w, b"$(" | b"<(" | b">(" | b"${" | b"$[")) && !text.contains(&b'`') {
            return;
        }
        match node.kind() {
            "command_substitution" | "process_substitution" => return self.statement(node),
            // Arithmetic evaluates variables, and an array subscript in one may run a command
            // (`x='a[$(cmd)]'; echo $((x))`); so do `${a[...]}` and `${x:offset}`.
            "arithmetic_expansion" => self.split.unparsed(format!("arithmetic, which may run a command a variable holds: {}", self.text(node))),
            "expansion" if evaluates(self.text(node)) => {
                self.split.unparsed(format!("an expansion bash evaluates, which may run a command a variable holds: {}", self.text(node)));
            }
            _ => {}
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.substitutions(child);
        }
    }

    /// Checks a redirection, and judges the commands the grammar put inside
    /// it (`cat <<E && git push` holds `git push`); returns the words after
    /// its target, which bash passes to the command (`git >out push` is `git push`).
    fn redirect<'t>(&mut self, node: Node<'t>) -> Vec<Node<'t>> {
        // Digits right before the operator, standing alone, are a descriptor number to bash
        // (`x\<newline> 2>&1`); the grammar may have read them as a word of the command.
        let start = node.start_byte();
        let digits = self.src[..start].iter().rev().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && self.src[..start - digits].last().is_none_or(|b| b.is_ascii_whitespace()) {
            self.split.unparsed(format!("a descriptor number the grammar does not read as bash does: {}", self.text(node)));
        }
        let mut words = Vec::new();
        // The target's pieces: those that touch are one word (`out'#'` is the file `out#`).
        let mut target: Vec<Node<'t>> = Vec::new();
        let heredoc = node.kind() == "heredoc_redirect";
        self.each_child(node, |walker, child| match child.kind() {
            // Bash reads `-C2>&1` as the word `-C2` and `>&1`; the grammar, as descriptor `-C2`.
            "file_descriptor" if !walker.text(child).bytes().all(|b| b.is_ascii_digit()) => {
                walker.split.unparsed(format!("a redirection the grammar does not read as bash does: {}", walker.text(node)));
            }
            "heredoc_start" => walker.heredoc_delimiter(node, child),
            "file_descriptor" | "heredoc_end" => {}
            "heredoc_body" => walker.substitutions(child),
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => words.extend(walker.redirect(child)),
            kind if is_word(kind) => {
                walker.substitutions(child);
                let joins_target = target.last().is_some_and(|t| t.end_byte() == child.start_byte()) && words.is_empty();
                if (target.is_empty() && !heredoc) || joins_target {
                    target.push(child);
                } else {
                    words.push(child);
                }
            }
            _ => walker.statement(child),
        });
        if node.kind() == "file_redirect" && !target.is_empty() {
            let descriptor = target.len() == 1 && target[0].kind() == "number";
            match self.tokens(&target).pop() {
                Some(Token::Word(w)) if w.starts_with("/dev/tcp/") || w.starts_with("/dev/udp/") => {
                    self.split.unparsed(format!("a redirection to a network socket: {}", self.text(node)));
                }
                Some(Token::Unknown(w)) if !descriptor => self.split.unparsed(format!("a redirection to a place known only when it runs: {w}")),
                _ => {}
            }
        }
        words
    }

    /// A simple command, with `more` words a redirection after it held.
    fn command(&mut self, node: Node, more: &[Node]) {
        let mut raw = RawCommand::default();
        let mut words = Vec::new();
        self.each_child(node, |walker, child| match child.kind() {
            // Before the program, it sets a variable; after it, bash passes it as a word.
            "variable_assignment" if words.is_empty() => {
                walker.substitutions(child);
                raw.assignments.push(walker.text(child).to_owned());
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => words.extend(walker.redirect(child)),
            "comment" => walker.comment(child),
            "command_name" => {
                walker.substitutions(child);
                words.push(child.named_child(0).unwrap_or(child));
            }
            _ => {
                walker.substitutions(child);
                words.push(child);
            }
        });
        words.extend_from_slice(more);
        raw.tokens = self.tokens(&words);
        self.split.command(raw, self.depth);
    }

    /// The tokens of `words`, in order; words the grammar read apart that
    /// touch (`'git'\#`) are one word to bash.
    fn tokens(&mut self, words: &[Node]) -> Vec<Token> {
        let mut tokens: Vec<Token> = Vec::new();
        let mut end = None;
        for word in words {
            // A bare word never holds a line break to bash: the grammar ran two lines together.
            let text = self.text(*word).as_bytes();
            if word.kind() == "word" && text.iter().enumerate().any(|(i, &b)| b == b'\n' && (i == 0 || text[i - 1] != b'\\')) {
                let shown = self.text(*word).to_owned();
                self.split.unparsed(format!("text the grammar does not read as bash does: {shown:?}"));
            }
            let token = self.token(*word);
            let token = match tokens.pop() {
                Some(last) if end == Some(word.start_byte()) => joined(last, token),
                Some(last) => {
                    tokens.push(last);
                    token
                }
                None => token,
            };
            tokens.push(token);
            end = Some(word.end_byte());
        }
        tokens
    }

    /// `export A=1 B`, `local x`, `readonly`, `declare`: judged as the command they are.
    fn declaration(&mut self, node: Node) {
        self.substitutions(node);
        let mut raw = RawCommand::default();
        let keyword = node.child(0).map(|k| self.text(k).to_owned()).unwrap_or_default();
        raw.tokens.push(Token::Word(keyword));
        self.each_child(node, |walker, child| {
            let token = match child.kind() {
                "variable_name" | "word" => walker.token(child),
                _ => Token::Unknown(walker.text(child).to_owned()),
            };
            raw.tokens.push(token);
        });
        self.split.command(raw, self.depth);
    }

    /// The word `node` stands for, when it can be known before the script runs.
    fn token(&self, node: Node) -> Token {
        let text = self.text(node);
        let unknown = || Token::Unknown(text.to_owned());
        match node.kind() {
            "word" | "variable_name" => unescape_word(text).map_or_else(unknown, Token::Word),
            "number" => Token::Word(text.to_owned()),
            "raw_string" => Token::Word(text.trim_start_matches('\'').trim_end_matches('\'').to_owned()),
            "string" => {
                let mut cursor = node.walk();
                if node.named_children(&mut cursor).any(|part| part.kind() != "string_content") {
                    return unknown();
                }
                // The text between the quotes, whole: the grammar's pieces leave out the line breaks.
                let inner = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
                Token::Word(unescape_double_quoted(inner))
            }
            "concatenation" => {
                let mut word = String::new();
                let mut cursor = node.walk();
                for part in node.named_children(&mut cursor) {
                    if part.kind() == "word" && self.text(part).contains(['{', '}']) {
                        return unknown();
                    }
                    match self.token(part) {
                        Token::Word(w) => word.push_str(&w),
                        Token::Unknown(_) => return unknown(),
                    }
                }
                Token::Word(word)
            }
            _ => unknown(),
        }
    }
}

/// Whether `${...}` evaluates something a variable may hold: a subscript
/// (but `[@]` and `[*]`), an offset that is not a number (`${x:y}`), an
/// indirection (`${!x}`), a transformation (`${x@P}`), or an assignment (`${x:=v}`).
fn evaluates(expansion: &str) -> bool {
    let inner = expansion.trim_start_matches("${").trim_end_matches('}').replace("[@]", "").replace("[*]", "");
    let subscript = inner.contains('[');
    let offset = inner.split_once(':').is_some_and(|(_, after)| {
        !after.starts_with(['-', '?', '+']) && !after.chars().all(|c| c.is_ascii_digit() || c == ':' || c == ' ')
    });
    subscript || offset || inner.starts_with('!') || inner.contains('@') || inner.contains('=')
}

/// Whether a node of this kind is a word (or stands for one).
fn is_word(kind: &str) -> bool {
    matches!(
        kind,
        "word" | "string" | "raw_string" | "concatenation" | "number" | "simple_expansion" | "expansion" | "command_substitution"
            | "process_substitution" | "ansi_c_string" | "translated_string" | "arithmetic_expansion"
    )
}

/// Two words the grammar read apart that bash reads as one.
fn joined(first: Token, second: Token) -> Token {
    match (first, second) {
        (Token::Word(a), Token::Word(b)) => Token::Word(a + &b),
        (a, b) => Token::Unknown(format!("{}{}", a.shown(), b.shown())),
    }
}

/// A bare word with its backslashes taken away; `None` when the shell would
/// expand it (a glob, a brace expansion, a leading `~`).
fn unescape_word(text: &str) -> Option<String> {
    if text.starts_with('~') {
        return None;
    }
    let mut word = String::with_capacity(text.len());
    let mut chars = text.chars();
    let mut braces = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => word.push(next),
            },
            '*' | '?' | '[' => return None,
            // An extended glob (`@(a|b)`, `+(x)`), under `shopt -s extglob`.
            '(' if word.ends_with(['@', '+', '!']) => return None,
            '{' => {
                braces = true;
                word.push(c);
            }
            _ => word.push(c),
        }
    }
    if braces && (word.contains(',') || word.contains("..")) {
        return None;
    }
    Some(word)
}

/// The text between double quotes, with the escapes that are escapes there.
fn unescape_double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => out.push(chars.next().expect("peeked")),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}
