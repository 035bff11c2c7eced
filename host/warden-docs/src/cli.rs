//! The command-line reference: the long `--help` of `warden` and of every
//! subcommand, as clap prints it, at a fixed width so that the page does not
//! depend on the terminal it was generated in.

use clap::Command;

/// The width the help is wrapped at (the CLI's own `max_term_width`).
const WIDTH: usize = 100;

/// The page for `command` (the root, `warden`), each subcommand under a
/// heading of its full name, depth first, hidden ones left out.
pub fn reference(command: Command) -> String {
    let mut command = fixed_width(command);
    command.build();
    let mut page = String::from(
        "# Command-line reference\n\n\
         Every command's `--help`, generated from the code (`cargo run -p warden-docs -- generate`); \
         a test fails when this page is out of date.\n",
    );
    section(&mut command, &mut Vec::new(), &mut page);
    page
}

fn fixed_width(command: Command) -> Command {
    command.term_width(WIDTH).mut_subcommands(fixed_width)
}

fn section(command: &mut Command, path: &mut Vec<String>, page: &mut String) {
    path.push(command.get_name().to_owned());
    let heading = "#".repeat(path.len().min(3) + 1);
    let help = command.render_long_help().to_string();
    page.push_str(&format!(
        "\n{heading} {}\n\n```text\n{}\n```\n",
        path.join(" "),
        help.trim_end()
    ));
    for sub in command.get_subcommands_mut() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        section(sub, path, page);
    }
    path.pop();
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Arg;

    #[test]
    fn every_visible_subcommand_gets_a_section_with_its_help() {
        let command = Command::new("warden")
            .about("Run untrusted tools.")
            .subcommand(
                Command::new("exec")
                    .about("Run a native command.")
                    .arg(Arg::new("cwd").long("cwd")),
            )
            .subcommand(Command::new("secret").hide(true))
            .subcommand(
                Command::new("sandbox").subcommand(Command::new("start").about("Start one.")),
            );
        let page = reference(command);
        assert!(page.contains("\n## warden\n"), "{page}");
        assert!(page.contains("\n### warden exec\n\n```text\nRun a native command.\n\nUsage: warden exec [OPTIONS]"), "{page}");
        assert!(page.contains("--cwd <cwd>"), "{page}");
        assert!(page.contains("\n#### warden sandbox start\n"), "{page}");
        assert!(
            !page.contains("secret"),
            "a hidden command is not documented: {page}"
        );
        assert!(!page.contains("warden help"), "{page}");
    }
}
