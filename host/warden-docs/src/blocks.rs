//! Examples marked runnable: a fenced block whose info string holds the word
//! `runnable` (`sh runnable`, `yaml runnable`). The tests run each shell block
//! and check each policy with `warden check`, so that an example a reader
//! copies works. A `text output` block after a runnable one, with no other
//! code between, is what it prints: each of its lines must appear in the
//! block's output.

/// One runnable block, with the line its body starts on.
#[derive(Debug, PartialEq, Eq)]
pub struct Block {
    pub line: usize,
    pub language: String,
    pub body: String,
    /// The lines of the `text output` block after it, if one follows before any other code.
    pub output: Option<String>,
}

/// A fence line's info string, also inside a block quote; `None` for a line
/// that is not a fence.
pub(crate) fn fence(line: &str) -> Option<&str> {
    let line = line.trim_start().trim_start_matches('>').trim_start();
    line.strip_prefix("```")
        .or_else(|| line.strip_prefix("~~~"))
        .map(|info| info.trim_start_matches(['`', '~']))
}

fn words(info: &str) -> Vec<String> {
    info.split(|c: char| c.is_whitespace() || matches!(c, ',' | '{' | '}' | '.'))
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

enum State {
    Prose,
    Runnable(Block),
    Output(String),
    OtherCode,
}

/// The runnable blocks of Markdown text, in order, each with the output
/// shown after it. A runnable block left open at the end is still taken.
pub fn runnable(markdown: &str) -> Vec<Block> {
    let mut blocks: Vec<Block> = Vec::new();
    let mut state = State::Prose;
    // Whether the last code block was a runnable one (prose may come between).
    let mut after_runnable = false;
    for (index, line) in markdown.lines().enumerate() {
        state = match (state, fence(line)) {
            (State::Prose, Some(info)) => {
                let words = words(info);
                if words.iter().any(|word| word == "runnable") {
                    let language = words
                        .into_iter()
                        .find(|word| word != "runnable")
                        .unwrap_or_default();
                    State::Runnable(Block {
                        line: index + 2,
                        language,
                        body: String::new(),
                        output: None,
                    })
                } else if after_runnable && words == ["text", "output"] {
                    State::Output(String::new())
                } else {
                    after_runnable = false;
                    State::OtherCode
                }
            }
            (State::Prose, None) => State::Prose,
            (State::Runnable(block), Some(_)) => {
                blocks.push(block);
                after_runnable = true;
                State::Prose
            }
            (State::Runnable(mut block), None) => {
                block.body.push_str(line);
                block.body.push('\n');
                State::Runnable(block)
            }
            (State::Output(text), Some(_)) => {
                if let Some(block) = blocks.last_mut() {
                    block.output = Some(text);
                }
                after_runnable = false;
                State::Prose
            }
            (State::Output(mut text), None) => {
                text.push_str(line);
                text.push('\n');
                State::Output(text)
            }
            (State::OtherCode, Some(_)) => State::Prose,
            (State::OtherCode, None) => State::OtherCode,
        };
    }
    if let State::Runnable(block) = state {
        blocks.push(block);
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(line: usize, language: &str, body: &str, output: Option<&str>) -> Block {
        Block {
            line,
            language: language.into(),
            body: body.into(),
            output: output.map(Into::into),
        }
    }

    #[test]
    fn only_blocks_marked_runnable_are_taken() {
        let text = "# T\n```sh\nnot this\n```\n```sh runnable\nwarden check p.yaml\nwarden fs ls /\n```\n\
                    ```yaml,runnable\nversion: 1\n```\n```text\n```sh runnable\n```\n";
        assert_eq!(
            runnable(text),
            [
                block(6, "sh", "warden check p.yaml\nwarden fs ls /\n", None),
                block(10, "yaml", "version: 1\n", None)
            ]
        );
    }

    #[test]
    fn every_spelling_of_runnable_is_taken_and_an_open_block_too() {
        let text = "> ```sh runnable\n> echo quoted\n> ```\n~~~bash\tRunnable\necho tilde\n~~~\n````sh {.runnable}\necho open";
        let found: Vec<(String, usize)> = runnable(text)
            .into_iter()
            .map(|b| (b.language, b.line))
            .collect();
        assert_eq!(
            found,
            [
                ("sh".to_owned(), 2),
                ("bash".to_owned(), 5),
                ("sh".to_owned(), 8)
            ]
        );
    }

    #[test]
    fn the_output_block_right_after_a_runnable_one_is_its_output() {
        let text = "```sh runnable\necho hi\n```\nIt says:\n```text output\nhi\n```\n```sh runnable\necho b\n```\n\
                    ```json\n{}\n```\n```text output\nnot b's\n```\n";
        assert_eq!(
            runnable(text),
            [
                block(2, "sh", "echo hi\n", Some("hi\n")),
                block(9, "sh", "echo b\n", None)
            ]
        );
    }
}
