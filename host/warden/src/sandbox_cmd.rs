//! `warden sandbox start|stop`: container sandboxes kept across commands.

use warden_shell::container::{ContainerSandbox, Owner};
use warden_shell::{ContainerName, ShellSandbox};

use crate::cli::SandboxCommand;
use crate::exec_cmd::shell_failure;
use crate::exit::Failure;

pub fn run(command: SandboxCommand) -> Result<(), Failure> {
    match command {
        SandboxCommand::Start { policy, name, worker } => {
            check_name(&name)?;
            let policy = warden_policy::load(&policy)?.with_network_of(worker.as_deref());
            if policy.shell.container.is_none() {
                return Err(Failure::usage(format!(
                    "{} has no `shell: {{ backend: container }}`: only container sandboxes are kept",
                    policy.file.display()
                )));
            }
            let fs = warden_fs::Sandbox::open_for(&policy, worker.as_deref())?;
            let kept = ContainerName { name: name.clone(), owner: Owner::Kept };
            let sandbox = ShellSandbox::with_options(&policy, fs, warden_shell::ProcessCap::start()?, kept).map_err(shell_failure)?;
            if let warden_shell::Backend::Container { engine, name: container } = sandbox.backend() {
                eprintln!("warden: sandbox {name} is running ({engine} container {container}); run commands with `warden exec --sandbox {name} -- ...`");
            }
            Ok(())
        }
        SandboxCommand::Stop { name } => {
            check_name(&name)?;
            ContainerSandbox::attach(&name, false).and_then(ContainerSandbox::stop).map_err(shell_failure)?;
            eprintln!("warden: sandbox {name} is removed");
            Ok(())
        }
    }
}

pub fn check_name(name: &str) -> Result<(), Failure> {
    let valid = !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) && !name.starts_with(['.', '-']);
    if !valid {
        return Err(Failure::usage(format!("'{}' is not a sandbox name: use 1 to 64 letters, digits, '.', '_' and '-'", name.escape_debug())));
    }
    Ok(())
}
