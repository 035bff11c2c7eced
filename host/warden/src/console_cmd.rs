//! `warden console`: the policy's console, for the CLI's own commands.

use std::sync::{Arc, Mutex};

use crate::cli::ConsoleArgs;
use crate::exit::Failure;

pub fn run(args: ConsoleArgs) -> Result<(), Failure> {
    let policy = warden_policy::load(&args.policy)?;
    let audit = args.audit.clone().or_else(|| policy.audit.clone());
    let socket = warden_console::socket_of(&policy.file).map_err(Failure::usage)?;
    let shown_socket = socket.display().to_string();
    let canonical = policy.file.canonicalize().map_err(|e| Failure::usage(format!("{}: {e}", policy.file.display())))?;
    let standalone = warden_console::Standalone { console: warden_console::Console::new(audit), address: args.listen, socket, policy: canonical };
    let mut opened = None;
    let served = warden_console::run_standalone(standalone, |login| {
        let page = login.split("/login").next().unwrap_or(login);
        eprintln!("warden: the console of {} is at {page}", policy.file.display());
        eprintln!("warden: log in once (the link is spent when used): {login}");
        eprintln!("warden: commands under this policy ask here while it runs (they find it at {shown_socket}); Ctrl-C stops it");
        if args.open {
            match open_in_browser(login) {
                Ok(file) => opened = Some(file),
                Err(e) => eprintln!("warden: --open: {e}"),
            }
        }
    });
    if let Some(page) = opened {
        remove_page(&page);
    }
    served.map_err(|e| Failure::usage(format!("warden console: {e}")))
}

/// Opens `login` in the person's browser through a page of Warden's private
/// folder that goes on to it: on a command line, the URL would be readable by
/// every user of the machine (`/proc/PID/cmdline`). The page, to remove.
fn open_in_browser(login: &str) -> Result<LoginPage, String> {
    let html = format!(
        "<!doctype html><meta charset=utf-8><meta name=referrer content=no-referrer>\
         <meta http-equiv=refresh content=\"0;url={login}\"><title>Warden console</title>"
    );
    let written = warden_policy::write_private_file("console", "-login.html", &html)?;
    let file = written.path.clone();
    let page: LoginPage = Arc::new(Mutex::new(Some(written)));
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let mut opening = std::process::Command::new(opener);
    let spawned = warden_shell::without_inherited_descriptors(&mut opening)
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn();
    match spawned {
        Ok(mut opener) => {
            // The browser reads the page at once; it is not left lying about (the console's end removes it too).
            let removed_later = page.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_secs(30));
                remove_page(&removed_later);
                let _ = opener.wait();
            });
            Ok(page)
        }
        Err(e) => {
            remove_page(&page);
            Err(format!("cannot run {opener}: {e}; open the login URL above by hand"))
        }
    }
}

/// The login page, removed by whichever comes first: its 30 s, or the console's end.
type LoginPage = Arc<Mutex<Option<warden_policy::PrivateFile>>>;

fn remove_page(page: &LoginPage) {
    if let Some(written) = page.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take() {
        written.remove();
    }
}
