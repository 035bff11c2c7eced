//! Examples marked runnable: a fenced block whose info string is
//! `sh runnable` or `yaml runnable`. The tests run each shell block and
//! check each policy with `warden check`, so that an example a reader copies
//! works.

/// One runnable block, with the line its body starts on.
#[derive(Debug, PartialEq, Eq)]
pub struct Block {
    pub line: usize,
    pub language: String,
    pub body: String,
}

enum State {
    Prose,
    Runnable(Block),
    OtherCode,
}

/// The runnable blocks of Markdown text, in order.
pub fn runnable(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut state = State::Prose;
    for (index, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        state = match (state, fence) {
            (State::Prose, Some(info)) => {
                let mut words = info.split([' ', ',']).filter(|word| !word.is_empty());
                let language = words.next().unwrap_or("").to_owned();
                if words.any(|word| word == "runnable") {
                    State::Runnable(Block {
                        line: index + 2,
                        language,
                        body: String::new(),
                    })
                } else {
                    State::OtherCode
                }
            }
            (State::Prose, None) => State::Prose,
            (State::Runnable(block), Some(_)) => {
                blocks.push(block);
                State::Prose
            }
            (State::Runnable(mut block), None) => {
                block.body.push_str(line);
                block.body.push('\n');
                State::Runnable(block)
            }
            (State::OtherCode, Some(_)) => State::Prose,
            (State::OtherCode, None) => State::OtherCode,
        };
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_blocks_marked_runnable_are_taken() {
        let text = "# T\n```sh\nnot this\n```\n```sh runnable\nwarden check p.yaml\nwarden fs ls /\n```\n\
                    ```yaml,runnable\nversion: 1\n```\n```text\n```sh runnable\n```\n";
        assert_eq!(
            runnable(text),
            [
                Block {
                    line: 6,
                    language: "sh".into(),
                    body: "warden check p.yaml\nwarden fs ls /\n".into()
                },
                Block {
                    line: 10,
                    language: "yaml".into(),
                    body: "version: 1\n".into()
                },
            ]
        );
    }
}
