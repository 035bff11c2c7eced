//! Text from a registry that a refusal repeats (a media type) is shown with
//! its control characters escaped: a manifest must not drive the terminal
//! of whoever reads the message (OSC 52 here would set their clipboard).

use serde_json::json;

use super::artifact::Artifact;
use super::hostile::{Hostile, Routes};
use super::refusals::{REPO, pull};
use super::{Env, guest};

/// ESC ] 52 ; c ; base64 BEL: "put 'hi' on the clipboard".
const OSC52: &str = "\u{1b}]52;c;aGk=\u{7}";

#[test]
fn a_media_type_holding_terminal_escapes_is_refused_and_shown_escaped() {
    // Catches a refusal that prints the registry's text raw, in each place a
    // media type is named: the layer's, the config's, the manifest's own, and
    // a layer that claims to be a policy.
    let wasm = guest("echo.wasm");
    let media_type = format!("application/x{OSC52}");
    let with = |field: &str, value: &str| {
        let mut artifact = Artifact::component(&wasm);
        match field {
            "config" => artifact.manifest["config"]["mediaType"] = json!(value),
            _ => artifact.manifest["mediaType"] = json!(value),
        }
        artifact
    };
    let policy = format!("application/vnd.warden.policy{OSC52}");
    let cases = [
        Artifact::wasm(&[(media_type.as_str(), wasm.as_slice())]),
        with("config", &media_type),
        with("manifest", &media_type),
        Artifact::wasm(&[(policy.as_str(), wasm.as_slice())]),
    ];
    for artifact in cases {
        // The manifest carries the escape as JSON writes it, \u001b.
        let bytes = artifact.bytes();
        assert!(!bytes.contains(&0x1b) && bytes.windows(6).any(|w| w == br"\u001b"), "{}", String::from_utf8_lossy(&bytes));
        let (env, registry) = (Env::new(), Hostile::start(Routes::new().artifact(REPO, &artifact)));
        let reference = registry.reference(REPO, &artifact.digest());
        let r = pull(&env, &registry, &reference, &[]);
        env.assert_refused(&r, &reference, r"\u{1b}");
        assert!(!r.stderr.bytes().any(|b| b == 0x1b || b == 0x07), "a control character reached stderr: {:?}", r.stderr);
    }
}
