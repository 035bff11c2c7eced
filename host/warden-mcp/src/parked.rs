//! 2026-07-28 clients that open URLs: a question is put at the console while
//! the call's result sends the client that question's page; it is kept here
//! until the call comes again with the state that names it, then answered
//! from there. One never taken is withdrawn after the time a person has.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use warden_console::{Asked, Decision};

use crate::elicit::ANSWER_TIME;

/// The most questions one client may leave parked (over HTTP every client
/// with the one token counts as one), and all of them: past these, a call
/// waits for the person at the console instead of parking its question.
const PER_CLIENT: usize = 32;
const ALL: usize = 256;

#[derive(Default)]
pub struct Parked(Mutex<HashMap<u64, Kept>>);

struct Kept {
    asked: Asked,
    at: Instant,
    /// Who was asked (as a sealed state names it).
    client: String,
}

impl Parked {
    /// Withdraws those nobody came back for in time.
    pub fn prune(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).retain(|_, kept| kept.at.elapsed() < ANSWER_TIME);
    }

    /// Whether a question put to `client` may be parked now.
    pub fn has_room(&self, client: &str) -> bool {
        self.prune();
        let parked = self.0.lock().unwrap_or_else(|p| p.into_inner());
        parked.len() < ALL && parked.values().filter(|k| k.client == client).count() < PER_CLIENT
    }

    /// Keeps `asked`, put to `client`, for the call's next round; its id and
    /// its page. Past the bounds (another call parked meanwhile) the client's oldest goes.
    pub fn park(&self, asked: Asked, client: &str) -> (u64, String) {
        let (id, url) = (asked.id(), asked.url());
        self.prune();
        let mut parked = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut mine: Vec<(u64, Instant)> = parked.iter().filter(|(_, k)| k.client == client).map(|(id, k)| (*id, k.at)).collect();
        mine.sort_by_key(|(_, at)| *at);
        for (old, _) in mine.iter().take((mine.len() + 1).saturating_sub(PER_CLIENT)) {
            parked.remove(old);
        }
        parked.insert(id, Kept { asked, at: Instant::now(), client: client.to_owned() });
        (id, url)
    }

    /// The person's answer to question `id`, once given, within the time
    /// they have; `None` when it is gone, not answered in time, or the call
    /// is cancelled (then it is withdrawn).
    pub async fn answer(&self, id: u64, cancelled: &CancellationToken) -> Option<Decision> {
        let Kept { mut asked, at, .. } = self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(&id)?;
        let left = ANSWER_TIME.checked_sub(at.elapsed())?;
        tokio::select! {
            decision = asked.answer() => decision,
            () = tokio::time::sleep(left) => None,
            () = cancelled.cancelled() => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(client: &str) -> warden_console::NewQuestion {
        warden_console::NewQuestion {
            client: client.into(),
            tool: "write_file".into(),
            access: "write".into(),
            path: "/p/a.md".into(),
            host_path: "/h/p/a.md".into(),
            reason: "r".into(),
            folders: vec!["/p".into()],
            offer_session: true,
        }
    }

    #[tokio::test]
    async fn a_client_that_never_comes_back_keeps_at_most_a_few_questions_on_the_page() {
        let console = warden_console::Console::new(None);
        let parked = Parked::default();
        let first = parked.park(console.ask(question("a")), "a").0;
        for _ in 0..PER_CLIENT + 4 {
            parked.park(console.ask(question("a")), "a");
        }
        assert!(!parked.has_room("a") && parked.has_room("b"));
        parked.park(console.ask(question("b")), "b");
        assert_eq!(parked.0.lock().unwrap().len(), PER_CLIENT + 1);
        // The oldest went, and its call, come back, hears no answer.
        assert_eq!(parked.answer(first, &CancellationToken::new()).await, None);
    }
}
