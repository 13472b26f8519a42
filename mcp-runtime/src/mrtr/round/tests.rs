use super::*;
use crate::Error;
use futures_util::FutureExt;
use serde_json::json;

fn sealer(max_rounds: u32) -> Arc<Sealer> {
    Arc::new(Sealer {
        audience: "test".into(),
        keys: KeyRing::new([("k1", [3u8; 32])]).unwrap().into(),
        ttl: Duration::from_secs(60),
        leeway: Duration::ZERO,
        max_rounds,
        replay: None,
    })
}

fn caps() -> ClientCapabilities {
    ClientCapabilities::from_map(json!({"elicitation": {}}).as_object().unwrap().clone())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Login {
    login: String,
}

async fn handler(input: Input) -> Result<String, Error> {
    let who: Login = input.elicit("login", "Who?").await?.accepted()?;
    Ok(format!("hi {}", who.login))
}

fn run(round: &Round) -> Finished<Result<String, Error>> {
    round
        .drive(handler(round.input()).boxed())
        .now_or_never()
        .expect("the round ends without waiting")
}

#[test]
fn a_question_ends_the_round_and_the_answer_completes_the_next() {
    let s = sealer(10);
    let binding = Binding::new(&ENGINE, "tools/call", "greet", Some(&json!({})));
    let first = Round::open(s.clone(), binding.clone(), &mut Map::new(), caps()).unwrap();
    assert!(matches!(run(&first), Finished::Asked));
    let asked = serde_json::to_value(first.seal().unwrap()).unwrap();
    assert_eq!(
        asked["inputRequests"]["login"]["method"],
        "elicitation/create"
    );

    let mut params = json!({
        "requestState": asked["requestState"],
        "inputResponses": {"login": {"action": "accept", "content": {"login": "ada"}}, "other": {}},
    });
    let second = Round::open(s, binding, params.as_object_mut().unwrap(), caps()).unwrap();
    assert_eq!(second.input().round(), 2);
    match run(&second) {
        Finished::Done(Ok(text)) => assert_eq!(text, "hi ada"),
        _ => panic!("the second round completes"),
    }
}

#[test]
fn a_state_opens_only_on_the_server_that_sealed_it() {
    let ours = sealer(10);
    let binding = Binding::new(&ENGINE, "tools/call", "greet", Some(&json!({})));
    let first = Round::open(ours.clone(), binding.clone(), &mut Map::new(), caps()).unwrap();
    assert!(matches!(run(&first), Finished::Asked));
    let state = serde_json::to_value(first.seal().unwrap()).unwrap()["requestState"].clone();
    let retry = || json!({"requestState": state, "inputResponses": {}});
    // Another server with the same key ring, the same tool name and arguments.
    let other = Arc::new(Sealer {
        audience: "another".into(),
        keys: KeyRing::new([("k1", [3u8; 32])]).unwrap().into(),
        ttl: Duration::from_secs(60),
        leeway: Duration::ZERO,
        max_rounds: 10,
        replay: None,
    });
    let mut params = retry();
    let refused = Round::open(
        other,
        binding.clone(),
        params.as_object_mut().unwrap(),
        caps(),
    );
    assert_eq!(
        refused.err().map(|e| e.code()),
        Some(crate::protocol::ErrorCode::INVALID_PARAMS)
    );
    let mut params = retry();
    assert!(Round::open(ours, binding, params.as_object_mut().unwrap(), caps()).is_ok());
}

#[test]
fn a_round_before_a_task_ends_at_the_body() {
    let s = sealer(10);
    let binding = Binding::new(&ENGINE, "tools/call", "t", None);
    let probe = Round::open(s, binding, &mut Map::new(), caps())
        .unwrap()
        .probe();
    let input = probe.input();
    let body_reached = async move {
        input.begin_body().await;
        "the body ran"
    };
    assert!(matches!(
        probe.drive(body_reached.boxed()).now_or_never(),
        Some(Finished::Body)
    ));
}

#[tokio::test]
async fn in_a_task_a_question_waits_for_its_answer() {
    let input = Input::live(caps(), Default::default(), Default::default(), 10);
    let asked = input.asked();
    let run = tokio::spawn(handler(input.clone()));
    asked.notified().await;
    let questions = input.take_questions();
    assert_eq!(questions.len(), 1);
    assert_eq!(questions[0].0, "login");
    assert!(input.take_questions().is_empty(), "handed over once");
    // An invalid answer asks again; a valid one lets the handler go on.
    input.deliver("login", json!({"action": "accept", "content": {"nope": 1}}));
    asked.notified().await;
    let again = input.take_questions();
    assert!(
        again[0].1["params"]["message"]
            .as_str()
            .unwrap()
            .contains("not valid")
    );
    input.deliver(
        "login",
        json!({"action": "accept", "content": {"login": "ada"}}),
    );
    assert_eq!(run.await.unwrap().unwrap(), "hi ada");
}

/// A live question answered wrongly again and again fails at the cap, where a client
/// answering at once would otherwise be asked as fast as it answers.
#[tokio::test]
async fn live_reasks_are_capped() {
    let input = Input::live(caps(), Default::default(), Default::default(), 3);
    let asked = input.asked();
    let run = tokio::spawn(handler(input.clone()));
    let mut asks = 0;
    while !run.is_finished() {
        tokio::select! {
            () = asked.notified() => {
                for (key, _) in input.take_questions() {
                    asks += 1;
                    input.deliver(&key, json!({"action": "maybe"}));
                }
            }
            () = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
        }
    }
    assert_eq!(asks, 3);
    let e = run.await.unwrap().unwrap_err();
    assert_eq!(
        e.to_string(),
        "the client's answers were not valid 3 times; the last: the answer needs an \
         `action` of accept, decline or cancel"
    );
}

#[test]
fn mapping_the_error_away_cannot_swallow_a_round() {
    let s = sealer(10);
    let round = Round::open(
        s,
        Binding::new(&ENGINE, "tools/call", "t", None),
        &mut Map::new(),
        caps(),
    )
    .unwrap();
    let input = round.input();
    let swallowing = async move {
        let r = input.elicit::<Login>("login", "Who?").await.map_err(|_| ());
        format!("{:?}", r.is_ok())
    };
    assert!(matches!(
        round.drive(swallowing.boxed()).now_or_never(),
        Some(Finished::Asked)
    ));
}

#[test]
fn states_are_bound_and_rounds_capped() {
    let s = sealer(1);
    let binding = Binding::new(&ENGINE, "tools/call", "greet", Some(&json!({"a": 1})));
    let round = Round::open(s.clone(), binding, &mut Map::new(), caps()).unwrap();
    assert!(matches!(run(&round), Finished::Asked));
    assert!(
        round
            .seal()
            .unwrap_err()
            .message()
            .contains("within 1 rounds")
    );

    let s = sealer(10);
    let binding = Binding::new(&ENGINE, "tools/call", "greet", Some(&json!({"a": 1})));
    let round = Round::open(s.clone(), binding, &mut Map::new(), caps()).unwrap();
    let _ = run(&round);
    let state = serde_json::to_value(round.seal().unwrap()).unwrap()["requestState"].clone();
    for other in [
        Binding::new(&ENGINE, "tools/call", "greet", Some(&json!({"a": 2}))),
        Binding::new(&ENGINE, "tools/call", "other", Some(&json!({"a": 1}))),
        Binding::new(&ENGINE, "prompts/get", "greet", Some(&json!({"a": 1}))),
    ] {
        let mut params = json!({"requestState": state});
        let e = Round::open(s.clone(), other, params.as_object_mut().unwrap(), caps());
        assert_eq!(
            e.err().unwrap().message(),
            "Invalid or expired requestState"
        );
    }
    let same = Binding::new(&ENGINE, "tools/call", "greet", Some(&json!({"a": 1})));
    let mut params = json!({"requestState": state});
    assert!(Round::open(s, same, params.as_object_mut().unwrap(), caps()).is_ok());
}

/// Asks twice in sequence: the second question's state carries the first answer.
async fn two_questions(input: Input) -> Result<String, Error> {
    let who: Login = input.elicit("login", "Who?").await?.accepted()?;
    let again: Login = input.elicit("again", "Sure?").await?.accepted()?;
    Ok(format!("hi {} {}", who.login, again.login))
}

/// An answer too large to carry in the next round's state is the client's to make
/// smaller: `-32602` saying so, not an internal error.
#[test]
fn answers_too_large_for_the_state_are_invalid_params() {
    let s = sealer(10);
    let binding = Binding::new(&ENGINE, "tools/call", "greet", Some(&json!({})));
    let drive = |round: &Round| {
        round
            .drive(two_questions(round.input()).boxed())
            .now_or_never()
            .expect("the round ends without waiting")
    };
    let first = Round::open(s.clone(), binding.clone(), &mut Map::new(), caps()).unwrap();
    assert!(matches!(drive(&first), Finished::Asked));
    let asked = serde_json::to_value(first.seal().unwrap()).unwrap();
    let big = "x".repeat(MAX_STATE_LEN);
    let mut params = json!({
        "requestState": asked["requestState"],
        "inputResponses": {"login": {"action": "accept", "content": {"login": big}}},
    });
    let second = Round::open(s, binding, params.as_object_mut().unwrap(), caps()).unwrap();
    assert!(matches!(drive(&second), Finished::Asked));
    let e = second.seal().expect_err("too large to seal");
    assert_eq!(
        e.code(),
        crate::protocol::ErrorCode::INVALID_PARAMS,
        "{e:?}"
    );
    assert!(e.message().contains("do not fit"), "{}", e.message());
}
