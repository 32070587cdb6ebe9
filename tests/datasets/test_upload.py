"""A user uploads JSONL; each line becomes an example with a prompt and a reference (000), or the upload is
refused at the first bad line, named with its problem."""

from __future__ import annotations

from domain.datasets.examples import Example
from domain.datasets.upload import MAX_LINE_BYTES, parse_examples

TRAIN_SPEED = {
    "messages": [
        {"role": "user", "content": "A train travels 120 km in 1.5 hours. What is its speed in km/h?"},
        {"role": "assistant", "content": "80"},
    ]
}


def test_000s_example_has_the_question_as_prompt_and_80_as_reference(jsonl):
    (example,) = parse_examples(jsonl(TRAIN_SPEED))
    assert example == Example(
        line=1, shape="messages", prompt=tuple(TRAIN_SPEED["messages"][:1]), reference="80", has_images=False
    )
    assert example.to_row() == {"prompt": TRAIN_SPEED["messages"][:1], "reference": "80"}


def test_a_conversation_keeps_its_system_message_and_earlier_turns_in_the_prompt(jsonl):
    messages = [
        {"role": "system", "content": "Answer with a number."},
        {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": "4"},
        {"role": "user", "content": "And 3+3?"},
        {"role": "assistant", "content": [{"type": "text", "text": "6"}]},
    ]
    (example,) = parse_examples(jsonl({"messages": messages}))
    assert [m["role"] for m in example.prompt] == ["system", "user", "assistant", "user"]
    assert example.reference == "6"


def test_a_preference_pair_takes_the_chosen_answer_as_reference(jsonl):
    pair = {"prompt": "Capital of France?", "chosen": "Paris", "rejected": "Lyon"}
    (example,) = parse_examples(jsonl(pair))
    assert (example.shape, example.reference, example.rejected) == ("preference", "Paris", "Lyon")
    assert example.prompt == ({"role": "user", "content": "Capital of France?"},)
    conversational = {
        "prompt": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Capital of France?"},
        ],
        "chosen": [{"role": "assistant", "content": "Paris"}],
        "rejected": [{"role": "assistant", "content": "Lyon"}],
    }
    (example,) = parse_examples(jsonl(conversational))
    assert (len(example.prompt), example.reference, example.rejected) == (2, "Paris", "Lyon")


def test_the_built_in_tasks_columns_are_accepted(jsonl):
    boxed, gsm8k = (
        parse_examples(jsonl({"prompt": "1+1?", "ground_truth": "2"})),
        parse_examples(jsonl({"question": "1+1?", "answer": "1+1=2\n#### 2"})),
    )
    assert next(boxed).to_row() == {"prompt": [{"role": "user", "content": "1+1?"}], "reference": "2"}
    assert next(gsm8k).reference == "1+1=2\n#### 2"


def test_blank_lines_windows_line_ends_and_a_byte_order_mark_are_fine(jsonl):
    lines = [
        b"\xef\xbb\xbf" + jsonl(TRAIN_SPEED)[0].replace(b"\n", b"\r\n"),
        b"\n",
        b"   \n",
        *jsonl(TRAIN_SPEED),
    ]
    assert [example.line for example in parse_examples(lines)] == [1, 4]


def test_images_mark_the_example(jsonl):
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "https://images.example/cat.png"}},
            ],
        },
        {"role": "assistant", "content": "A cat."},
    ]
    (example,) = parse_examples(jsonl({"messages": messages}))
    assert example.has_images and example.reference == "A cat."
    (pair,) = parse_examples(jsonl({"prompt": "p", "chosen": "a", "rejected": "b", "images": ["https://images.example/cat.png"]}))
    assert pair.has_images


def test_parsing_streams_and_stops_at_the_first_bad_line(jsonl, refusal):
    read = []

    def lines():
        for number in range(1, 1_000_000):
            read.append(number)
            yield b"{not json}\n" if number == 3 else jsonl(TRAIN_SPEED)[0]

    examples = parse_examples(lines())
    assert next(examples).line == 1 and read == [1]  # nothing is read ahead
    assert (
        refusal(lines())
        == "Line 3: not JSON (Expecting property name enclosed in double quotes at column 2)."
    )


def test_an_empty_file_is_refused(refusal):
    assert refusal([]) == "The file is empty: upload one JSON example a line."
    assert refusal([b"\n", b"  \r\n"]) == "The file is empty: upload one JSON example a line."


def test_a_line_over_1_mib_is_refused(jsonl, refusal):
    big = {
        "messages": [{"role": "user", "content": "x" * MAX_LINE_BYTES}, {"role": "assistant", "content": "y"}]
    }
    assert refusal(jsonl(TRAIN_SPEED, big)) == "Line 2 is over 1 MiB: each example must fit in 1 MiB a line."


def test_a_line_that_is_not_utf8_is_refused(jsonl, refusal):
    assert refusal([*jsonl(TRAIN_SPEED), b'{"question": "caf\xe9", "answer": "1"}']) == (
        "Line 2 is not UTF-8 text (byte 18). Save the file as UTF-8."
    )


def test_every_bad_line_is_named_with_its_problem(jsonl, refusal):
    user, assistant, system = (
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
        {"role": "system", "content": "s"},
    )
    cases = {
        "[1, 2]": 'Line 1: expected a JSON object such as {"messages": [...]}, not a list.',
        '{"text": "hello"}': 'Line 1: expected {"messages": [...]} or a preference pair {"prompt", "chosen", '
        '"rejected"}; found the keys text.',
        '{"messages": []}': "Line 1: messages is empty.",
        '{"messages": "hi"}': "Line 1: messages must be a list of messages, not a text.",
    }
    for line, message in cases.items():
        assert refusal([line.encode()]) == message
    assert refusal(jsonl({"messages": [user]})) == (
        "Line 1: the last message must be the assistant's reply, the reference; this one is from the user."
    )
    assert refusal(jsonl({"messages": [assistant]})) == (
        "Line 1: message 1 of messages is from the assistant, but the user speaks next: "
        "user and assistant take turns, the user first."
    )
    assert refusal(jsonl({"messages": [user, user, assistant]})) == (
        "Line 1: message 2 of messages is from the user, but the assistant speaks next: "
        "user and assistant take turns, the user first."
    )
    assert refusal(jsonl({"messages": [user, system, assistant]})) == (
        "Line 1: message 2 of messages is a system message; only the first may be."
    )
    assert refusal(jsonl({"messages": [{"role": "tool", "content": "x"}, assistant]})) == (
        "Line 1: message 1 of messages has the role 'tool'; use system, user or assistant."
    )
    assert refusal(jsonl({"messages": [{"content": "x"}, assistant]})) == (
        "Line 1: message 1 of messages has no role; use system, user or assistant."
    )
    assert refusal(jsonl({"messages": [{"role": "user"}, assistant]})) == (
        "Line 1: message 1 of messages needs a content: text, or a list of content parts."
    )
    assert refusal(jsonl({"messages": [user, "a"]})) == (
        "Line 1: message 2 of messages must be an object with a role and a content, not a text."
    )
    assert refusal(jsonl({"messages": [system, assistant]})) == (
        "Line 1: message 2 of messages is from the assistant, but the user speaks next: "
        "user and assistant take turns, the user first."
    )


def test_bad_preference_pairs_are_named(jsonl, refusal):
    assert refusal(jsonl({"prompt": "p", "chosen": "a"})) == (
        "Line 1: a preference pair needs prompt, chosen and rejected; rejected is missing."
    )
    assert refusal(jsonl({"prompt": "", "chosen": "a", "rejected": "b"})) == "Line 1: prompt is empty."
    ends_with_assistant = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    assert refusal(jsonl({"prompt": ends_with_assistant, "chosen": "a", "rejected": "b"})) == (
        "Line 1: prompt must end with a user message; its last is from the assistant."
    )
    assert refusal(jsonl({"prompt": "p", "chosen": [{"role": "user", "content": "a"}], "rejected": "b"})) == (
        "Line 1: chosen must end with the assistant's answer; its last message is from the user."
    )
    assert refusal(jsonl({"prompt": "p", "chosen": 3, "rejected": "b"})) == (
        "Line 1: chosen must be text or a list of messages ending with the assistant's answer."
    )


def test_one_file_holds_one_format(jsonl, refusal):
    lines = jsonl(TRAIN_SPEED, TRAIN_SPEED, {"prompt": "p", "chosen": "a", "rejected": "b"})
    assert refusal(lines) == (
        "Line 3: it is a preference pair, but line 1 is a chat example. Use one format in a file."
    )


def test_a_ground_truth_or_answer_that_is_not_text_is_refused(jsonl, refusal):
    assert (
        refusal(jsonl({"prompt": "p", "ground_truth": 2}))
        == "Line 1: ground_truth must be text, not a number."
    )
    assert refusal(jsonl({"question": "q", "answer": None})) == "Line 1: answer must be text, not a null."
