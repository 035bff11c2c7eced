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

#[derive(Default)]
pub struct Parked(Mutex<HashMap<u64, (Asked, Instant)>>);

impl Parked {
    /// Keeps `asked` for the call's next round; its id and its page.
    pub fn park(&self, asked: Asked) -> (u64, String) {
        let (id, url) = (asked.id(), asked.url());
        let mut parked = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // Dropped, those nobody came back for leave the page.
        parked.retain(|_, (_, at)| at.elapsed() < ANSWER_TIME);
        parked.insert(id, (asked, Instant::now()));
        (id, url)
    }

    /// The person's answer to question `id`, once given, within the time
    /// they have; `None` when it is gone, not answered in time, or the call
    /// is cancelled (then it is withdrawn).
    pub async fn answer(&self, id: u64, cancelled: &CancellationToken) -> Option<Decision> {
        let (mut asked, at) = self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(&id)?;
        let left = ANSWER_TIME.checked_sub(at.elapsed())?;
        tokio::select! {
            decision = asked.answer() => decision,
            () = tokio::time::sleep(left) => None,
            () = cancelled.cancelled() => None,
        }
    }
}
