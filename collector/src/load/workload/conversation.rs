//! `--turns`: conversations whose every turn resends the questions and answers so far, and the
//! open loop's conversations waiting for their next turn.

use std::collections::BTreeMap;

use llmsweep_shared::bundle::Api;

use crate::load::run::stream::trace::{Finished, Keep};
use crate::load::workload::{Prompt, prompt_hash};

/// One conversation: its questions and answers so far.
#[derive(Debug, Default)]
pub(crate) struct Conversation {
    /// The order it was started in within its point: the open loop serves the oldest first.
    id: u64,
    history: Vec<(String, String)>,
}

impl Conversation {
    /// The turn it is at (0: the first).
    pub(crate) fn turn(&self) -> u32 {
        self.history.len() as u32
    }

    /// What this turn keeps of its answer: all of it when a later one of `turns` resends it.
    pub(crate) fn keep(&self, turns: u32) -> Keep {
        if self.turn() + 1 < turns {
            Keep::Answer
        } else {
            Keep::Start
        }
    }

    /// This turn's prompt, whose new question is `user`: the whole conversation resent, as
    /// chat messages or, for completions, as one text; `None` at the first turn, which sends
    /// the question alone.
    pub(crate) fn prompt(&self, user: &Prompt, api: Api) -> Option<Prompt> {
        if self.history.is_empty() {
            return None;
        }
        let (text, messages) = match api {
            Api::Chat => {
                let mut m = Vec::new();
                for (q, a) in &self.history {
                    m.push(serde_json::json!({"role": "user", "content": q}));
                    m.push(serde_json::json!({"role": "assistant", "content": a}));
                }
                m.push(serde_json::json!({"role": "user", "content": user.text}));
                let m = serde_json::Value::Array(m);
                (m.to_string(), Some(m))
            }
            _ => {
                let mut t: String = self
                    .history
                    .iter()
                    .map(|(q, a)| format!("{q}{a}\n\n"))
                    .collect();
                t.push_str(&user.text);
                (t, None)
            }
        };
        Some(Prompt {
            hash: prompt_hash(&text),
            // The answers resent are the server's; the workload is the questions, asked in the
            // same turns.
            content_hash: user.content_hash.clone(),
            // What the server counts of a conversation is not known before it answers.
            tokens: 0,
            words: text.split_whitespace().count() as u64,
            text: if messages.is_some() {
                String::new()
            } else {
                text
            },
            messages,
            output_len: user.output_len,
        })
    }

    /// This turn, which asked `question`, ended in `f`: tags its record with the turn and
    /// takes its whole answer; the conversation, when it goes on (the turn succeeded and
    /// `turns` has more). A failed turn ends its conversation: the next would resend an
    /// answer the server never gave.
    pub(crate) fn answered(
        mut self,
        question: String,
        f: &mut Finished,
        turns: u32,
    ) -> Option<Self> {
        let turn = self.turn();
        f.record.turn = Some(turn);
        let answer = f.answer.take();
        if !f.record.is_ok() || turn + 1 >= turns {
            return None;
        }
        self.history
            .push((question, answer.unwrap_or_else(|| f.text.clone())));
        Some(self)
    }
}

/// The open loop's conversations between turns. Each arrival is one request, so the offered
/// rate stays the schedule's: it takes the oldest conversation ready for its next turn, or
/// starts a new one when none is.
#[derive(Debug, Default)]
pub(crate) struct Ready {
    waiting: BTreeMap<u64, Conversation>,
    started: u64,
}

impl Ready {
    /// A conversation whose turn has been answered and that has turns left.
    pub(crate) fn put(&mut self, c: Conversation) {
        self.waiting.insert(c.id, c);
    }

    /// The conversation the next arrival continues.
    pub(crate) fn next(&mut self) -> Conversation {
        if let Some((_, c)) = self.waiting.pop_first() {
            return c;
        }
        self.started += 1;
        Conversation {
            id: self.started - 1,
            history: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmsweep_shared::bundle::RequestRecord;

    fn question(text: &str) -> Prompt {
        Prompt {
            text: text.into(),
            tokens: 2,
            hash: prompt_hash(text),
            content_hash: None,
            words: 2,
            messages: None,
            output_len: None,
        }
    }

    fn finished(ok: bool, text: &str, answer: Option<&str>) -> Finished {
        let mut record: RequestRecord = serde_json::from_value(serde_json::json!({
            "start_s": 0.0, "ttft_s": 0.01, "e2e_s": 0.1, "input_tokens": 2,
            "output_tokens": 2, "chunks": 2,
        }))
        .expect("a record");
        if !ok {
            record.error = Some(llmsweep_shared::bundle::RequestError {
                kind: llmsweep_shared::bundle::ErrorKind::Timeout,
                status: None,
                message: "no complete answer".into(),
            });
        }
        Finished {
            record,
            itl_gaps_s: Vec::new(),
            chunk_tokens: Default::default(),
            text: text.into(),
            answer: answer.map(str::to_string),
        }
    }

    #[test]
    fn each_turn_resends_the_questions_and_whole_answers_before_it() {
        let c = Conversation::default();
        assert!(c.prompt(&question("q one"), Api::Completions).is_none());
        assert_eq!(c.keep(3), Keep::Answer);
        let mut f = finished(true, " a", Some(" a one"));
        let c = c.answered("q one".into(), &mut f, 3).expect("turns left");
        assert_eq!((f.record.turn, f.answer), (Some(0), None));
        let text = c.prompt(&question("q two"), Api::Completions).unwrap();
        assert_eq!(text.text, "q one a one\n\nq two");
        assert_eq!(text.words, 6);
        let chat = c.prompt(&question("q two"), Api::Chat).unwrap();
        assert_eq!(
            chat.messages.unwrap(),
            serde_json::json!([
                {"role": "user", "content": "q one"},
                {"role": "assistant", "content": " a one"},
                {"role": "user", "content": "q two"},
            ])
        );
        // The last turn's answer is resent by no one: only its start is kept.
        let mut f = finished(true, " b", Some(" b two"));
        let c = c
            .answered("q two".into(), &mut f, 3)
            .expect("one turn left");
        assert_eq!((c.turn(), c.keep(3)), (2, Keep::Start));
        let mut f = finished(true, " c", None);
        assert!(c.answered("q three".into(), &mut f, 3).is_none());
        assert_eq!(f.record.turn, Some(2));
    }

    #[test]
    fn a_failed_turn_ends_its_conversation() {
        let mut f = finished(false, "", Some(""));
        assert!(
            Conversation::default()
                .answered("q".into(), &mut f, 3)
                .is_none()
        );
        assert_eq!(f.record.turn, Some(0));
    }

    #[test]
    fn an_arrival_continues_the_oldest_ready_conversation_else_starts_one() {
        let mut ready = Ready::default();
        let (a, b, c) = (ready.next(), ready.next(), ready.next());
        assert_eq!((a.id, b.id, c.id), (0, 1, 2));
        // c and a became ready, in that order: a, the older, goes first.
        ready.put(c);
        ready.put(a);
        assert_eq!(ready.next().id, 0);
        assert_eq!(ready.next().id, 2);
        assert_eq!(ready.next().id, 3, "none ready: a new one");
    }
}
