//! Approvals asked of the person at the MCP client, by elicitation: a form
//! naming the tool, the operation, the path and the reason, with the choices
//! allow once / allow for this session / deny, and the folder to grant.
//!
//! 2025-11-25 clients get `elicitation/create` while the operation waits;
//! 2026-07-28 clients get the form in the call's result (input required), and
//! call again with the answer and the sealed state of the request.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, EnumSchema, InputRequest,
    InputRequests, InputRequiredResult,
};
use rmcp::model::RequestStateCodec;
use rmcp::model::SealOptions;
use rmcp::{Peer, RoleServer};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use warden_fs::approval::{Answer, Approver, Request, Scope};

/// How long a person may take over one form.
const ANSWER_TIME: Duration = Duration::from_secs(300);
/// The key of the one form a call's result holds.
const KEY: &str = "approval";

/// The form for `request`.
pub fn form(request: &Request) -> ElicitRequestParams {
    let tool = request.tool.as_deref().unwrap_or("a tool");
    let message = format!(
        "{tool} asks to {} {} (host path {}), because {}. Allow it?",
        request.access.as_str(),
        request.path,
        request.host_path.display(),
        request.reason
    );
    let decision = EnumSchema::builder(vec!["once".into(), "session".into(), "deny".into()])
        .enum_titles(vec!["Allow once".into(), "Allow for this session".into(), "Deny".into()])
        .and_then(|b| b.with_default("deny"))
        .expect("the titles match the values")
        .title("Decision")
        .build();
    let folders: Vec<String> = request.choices.iter().map(|c| c.path.to_string()).collect();
    let folder = EnumSchema::builder(folders.clone())
        .with_default(folders[0].clone())
        .expect("the default is a choice")
        .title(format!("Folder to grant {} access to", request.access.as_str()))
        .build();
    let schema = ElicitationSchema::builder()
        .required_enum_schema("decision", decision)
        .required_enum_schema("folder", folder)
        .build()
        .expect("a form of two enums is a valid schema");
    ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema: schema }
}

/// The answer a form's result gives to `request`. A decline is a denial; a
/// cancel, or a result that does not fit the form, leaves it unanswered.
pub fn answer(request: &Request, result: &ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => {}
        ElicitationAction::Decline => return Answer::Deny,
        _ => return Answer::Unanswered,
    }
    let content = result.content.as_ref();
    let field = |name: &str| content.and_then(|c| c.get(name)).and_then(|v| v.as_str());
    let scope = match field("decision") {
        Some("once") => Scope::Once,
        Some("session") => Scope::Session,
        Some("deny") => return Answer::Deny,
        _ => return Answer::Unanswered,
    };
    let folder = field("folder").unwrap_or_else(|| request.choices[0].path.as_str());
    match request.choices.iter().position(|c| c.path.as_str() == folder) {
        Some(choice) => Answer::Allow { scope, choice },
        None => Answer::Unanswered,
    }
}

/// 2025-11-25: from the blocking thread the operation runs on, hands the
/// form to the call's own task ([`asking_while`]), which asks by
/// `elicitation/create`, and waits for the person.
pub struct Eliciting {
    pub questions: mpsc::Sender<Question>,
}

/// A form for the person, and where the answer goes (`None`: no answer).
pub struct Question {
    form: ElicitRequestParams,
    reply: oneshot::Sender<Option<ElicitResult>>,
}

impl Approver for Eliciting {
    fn decide(&mut self, request: &Request) -> Answer {
        let (reply, answered) = oneshot::channel();
        if self.questions.blocking_send(Question { form: form(request), reply }).is_err() {
            return Answer::Unanswered;
        }
        match answered.blocking_recv() {
            Ok(Some(result)) => answer(request, &result),
            _ => Answer::Unanswered,
        }
    }
}

/// Runs `work` (a call) and puts its questions to the person meanwhile. They
/// are asked from the call's own task, so that over HTTP they ride the
/// call's event stream, where a client that opened no other stream hears them.
pub async fn asking_while<T>(work: impl std::future::Future<Output = T>, questions: &mut mpsc::Receiver<Question>, peer: &Peer<RoleServer>) -> T {
    tokio::pin!(work);
    loop {
        tokio::select! {
            done = &mut work => return done,
            Some(question) = questions.recv() => {
                let answered = peer.create_elicitation_with_timeout(question.form, Some(ANSWER_TIME)).await;
                let _ = question.reply.send(answered.inspect_err(|e| tracing::warn!("elicitation failed: {e}")).ok());
            }
        }
    }
}

/// 2026-07-28: leaves the first new request unanswered and keeps it, for the
/// call's result to ask; answers the request the client answered last round.
pub struct Deferring {
    pub answered: Option<(Pending, ElicitResult)>,
    pub asked: Arc<Mutex<Option<Request>>>,
}

impl Approver for Deferring {
    fn decide(&mut self, request: &Request) -> Answer {
        if let Some((_, result)) = self.answered.take_if(|(pending, _)| pending.is(request)) {
            return answer(request, &result);
        }
        let mut asked = self.asked.lock().unwrap_or_else(|p| p.into_inner());
        asked.get_or_insert_with(|| request.clone());
        Answer::Deferred
    }
}

/// The request a call's result asked about, sealed into its `requestState`
/// and bound to the tool and its arguments.
#[derive(Serialize, Deserialize)]
pub struct Pending {
    tool: String,
    arguments: String,
    access: String,
    path: String,
    /// Random: an answered state is spent, and a second answer with it refused.
    nonce: String,
}

impl Pending {
    fn is(&self, request: &Request) -> bool {
        self.access == request.access.as_str() && self.path == request.path.as_str()
    }
}

/// Seals and opens the state of 2026-07-28 approvals.
pub struct StateSeal {
    codec: RequestStateCodec,
    /// Nonces of the states answered, until they would have expired anyway.
    spent: Mutex<std::collections::HashMap<String, std::time::Instant>>,
}

impl StateSeal {
    /// With a key of the process's own: states outlive neither it nor a restart.
    pub fn new() -> Result<StateSeal, String> {
        let codec = RequestStateCodec::try_new(random::<32>()?.to_vec()).map_err(|e| e.to_string())?;
        Ok(StateSeal { codec, spent: Mutex::default() })
    }

    /// The call's result asking about `request`.
    pub fn ask(&self, tool: &str, arguments: &str, request: &Request) -> Result<InputRequiredResult, String> {
        let pending = Pending {
            tool: tool.to_owned(),
            arguments: arguments.to_owned(),
            access: request.access.as_str().to_owned(),
            path: request.path.to_string(),
            nonce: random::<16>()?.iter().map(|b| format!("{b:02x}")).collect(),
        };
        let options = SealOptions::new().associated_data(tool.as_bytes()).ttl(ANSWER_TIME);
        let state = self.codec.seal_json_with(&pending, &options).map_err(|e| e.to_string())?;
        let mut requests = InputRequests::new();
        requests.insert(KEY.to_owned(), InputRequest::Elicitation(ElicitRequest::new(form(request))));
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// The answered request of a retried call: the state must be ours, fresh,
    /// and for this very tool and arguments.
    pub fn answered(
        &self,
        tool: &str,
        arguments: &str,
        state: &str,
        responses: Option<&std::collections::BTreeMap<String, serde_json::Value>>,
    ) -> Result<(Pending, ElicitResult), String> {
        let refused = || "this call's approval state is not valid; call the tool again without it".to_owned();
        let pending: Pending = self.codec.open_json_with(state, tool.as_bytes()).map_err(|_| refused())?;
        if pending.tool != tool || pending.arguments != arguments || !self.spend(&pending.nonce) {
            return Err(refused());
        }
        let result = responses
            .and_then(|r| r.get(KEY))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok())
            .unwrap_or_else(|| ElicitResult::new(ElicitationAction::Cancel));
        Ok((pending, result))
    }

    /// Whether `nonce` was not spent yet; it is now.
    fn spend(&self, nonce: &str) -> bool {
        let now = std::time::Instant::now();
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        spent.retain(|_, at| now.duration_since(*at) < ANSWER_TIME);
        spent.insert(nonce.to_owned(), now).is_none()
    }
}

pub(crate) fn random<const N: usize>() -> Result<[u8; N], String> {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    Ok(bytes)
}
