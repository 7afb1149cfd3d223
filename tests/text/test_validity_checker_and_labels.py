"""The validity checker on known bad and good texts, regeneration, and label-restricted votes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from helpers.text_doubles import (
    LABELLED_DIM,
    REVIEW_LABELS,
    REVIEWS,
    HashEmbedder,
    TopicLM,
    labelled_text_pe,
)
from privevo.text import LLMRandomAPI, LLMVariationAPI, TextPrivateEvolution
from privevo.text.apis import FILL_PROMPT, instruction_of
from privevo.text.labels import LABEL_SCALE, with_labels
from privevo.text.validity import TextChecker, invalid_reason, repair

# -- the checker on known strings ------------------------------------------------------------

BAD = {
    # leftover blanks, as seen in the quick start's output
    "_": "mask",
    "_post I would not _ as any _ of my _ ingredients": "mask",
    "I bought [the_ item] for my kids and they loved it.": "mask",
    "This [product name] is the best snack I have had.": "mask",
    "[Unspecified detail, no description included] made this dish delicious.": "mask",
    "Great coffee, ___ and smooth, I drink it every day.": "mask",
    # the instruction echoed inside the reply
    "Fill in the blanks in this food review and write it out as one complete food review.": "echo",
    "Reply with the food review only. The tea was fine.": "echo",
    "Here is the rewritten review with the blanks filled in the way you asked.": "echo",
    "Nice taste, a bit salty. That was the rewritten version of the review.": "echo",
    "Sure, I'd be happy to provide a warm and nostalgic dark chocolate review.": "echo",
    # the assistant talking about the notes, the request or itself (SmolLM2's replies)
    "Sure, in this note there is no meat listed and I replaced it by sweet treats.": "echo",
    "I'm so sorry to speak up here regarding the topic you chose. The lamb was dry.": "echo",
    "Can't find any relevant food reviews in the provided text - sorry.": "echo",
    "I am an AI designed to provide suggestions and improve your writing.": "echo",
    "Mmmm, I'm glad to have an AI-powered meal replacement, it is tasty.": "echo",
    "Tasty dip, thanks to Smol's little suggestion of trying those recipes.": "echo",
    "Baked, not roasted.\nHere's the review: I'm so glad to see a new place open.": "echo",
    "Great chips. I apologize for any confusion in my earlier answer.": "echo",
    "Dear Samantha, the staff here at Hugging Face love this coffee.": "echo",
    "The original text incorrectly used the word twice, so the tea reads better now.": "echo",
    "I'm here to help. Let's see how this snack connects with your taste.": "echo",
    "This review highlights a light dish made with fresh, local ingredients.": "echo",
    "Cheers, I'll do my best to ensure the review is of great interest.": "echo",
    "I'm just running this sentence for you to get the best of itself.": "echo",
    "I'm so glad that I could help! I recently had a great Moroccan dish.": "echo",
    "While I can't choose which item to share on this text, the wine is good.": "echo",
    # empty or nearly so
    "": "empty",
    "   ": "empty",
    "Great!": "empty",
    "...": "empty",
}
GOOD = [
    "this stuff is not stuffing its not good at all save your money",
    "I absolutely LOVE this dried fruit. Kids love it too, a great lunchbox snack.",
    "Bottom line: good value for money, and the coffee tastes fresh.",
    "The original formula was better.\nNow it tastes like cardboard.",
    "My dog goes crazy for these treats! Five stars.",
    "Not bad, but a little too sweet for my taste.",
    # real reviewers' phrasing that the echo rules must leave alone
    "I'm sorry to say this coffee has gone downhill; notes of burnt toast now.",
    "Here's the situation: two fussy dogs, and both eat this food happily.",
    "The notes of cherry and cocoa are lovely in this dark roast.",
]


@pytest.mark.parametrize("text,reason", sorted(BAD.items()))
def test_known_bad_texts_are_invalid_for_the_right_reason(text, reason):
    fixed, got = TextChecker().check(text, max_new_tokens=64)
    assert got == reason, (text, fixed)


@pytest.mark.parametrize("text", GOOD)
def test_known_good_texts_are_valid_and_left_alone(text):
    fixed, reason = TextChecker().check(text, max_new_tokens=64)
    assert reason is None
    assert fixed == text.strip()


@pytest.mark.parametrize(
    "text,kept",
    [
        (
            "Rewrite the sentence: This coffee is smooth and rich.",
            "This coffee is smooth and rich.",
        ),
        ("Sure! Here is the rewritten review:\nThe tea is lovely.", "The tea is lovely."),
        ("Food review: Crunchy chips, not too salty.", "Crunchy chips, not too salty."),
        ("This is a rewritten version of the review: nice, a bit salty.", "nice, a bit salty."),
        ('Completed review:\n"Tasty jam, I buy it often."', "Tasty jam, I buy it often."),
    ],
)
def test_a_leading_echo_is_stripped_and_the_rest_kept(text, kept):
    fixed, reason = TextChecker().check(text, max_new_tokens=64)
    assert (fixed, reason) == (kept, None)


def test_a_text_cut_by_the_token_cap_is_trimmed_to_its_last_sentence_or_refused():
    capped = "This coffee is smooth and rich. I drink it every day and my wife loves it and we "
    fixed, reason = TextChecker().check(capped * 1, max_new_tokens=16)  # ~64 chars: capped
    assert (fixed, reason) == ("This coffee is smooth and rich.", None)
    run_on = "and then we went on and on about the chips and the salt and the crunch and the bag "
    assert TextChecker().check(run_on, max_new_tokens=16)[1] == "truncated"
    # the same run-on text well under the cap ended by itself: valid
    assert TextChecker().check(run_on, max_new_tokens=200)[1] is None


def test_length_far_outside_the_parents_range_is_invalid():
    parent = " ".join(["word"] * 40) + "."
    assert invalid_reason("Tasty and cheap, good.", reference_words=40) == "length"
    assert invalid_reason(" ".join(["tasty"] * 200) + ".", reference_words=40) == "length"
    assert invalid_reason(" ".join(["tasty"] * 30) + ".", reference_words=40) is None
    assert TextChecker().check("Nice snack overall.", reference=parent)[1] == "length"
    assert TextChecker().check("Nice snack, thanks.", reference="Good tea.")[1] is None


def test_four_words_in_a_row_of_the_instruction_or_naming_the_kind_are_echoes():
    instruction = instruction_of(FILL_PROMPT, "food review")
    echo = "The tea is fine. I write a food review from these notes, as they said."
    assert TextChecker().check(echo, instruction=instruction)[1] == "echo"
    fine = "I write a food blog about teas, and this one is calm and warm. I drink it daily."
    assert TextChecker().check(fine, instruction=instruction)[1] is None
    # a reply naming the prompt's own two-word kind talks about itself
    share = "I'm thrilled to share a food review about the perfect breakfast option."
    assert TextChecker().check(share, instruction=instruction)[1] == "echo"
    good = "Sounds right, and this is a good food review for anyone curious about the chips."
    assert TextChecker().check(good, instruction=instruction)[1] == "echo"
    one_word_kind = instruction_of(FILL_PROMPT, "review")
    assert TextChecker().check("Worth this review: tasty.", instruction=one_word_kind)[1] is None
    # the fields of a template are content, not instruction: a topic may be repeated
    topical = instruction_of("Write a short {kind} about {topic}. Reply with it only.", "review")
    assert ("a", "short", "review", "about") in topical
    assert not any("coffee" in gram for gram in topical)


def test_the_rewrite_prompt_shows_the_kept_words_and_no_blank():
    api = LLMVariationAPI(ScriptedLM([]), mask_fraction=0.5, kind="food review")
    parent = "This coffee is smooth and rich and I drink it every single morning."
    prompt = api.prompt_for(parent, np.random.default_rng(3))
    assert "_" not in prompt and prompt.startswith("Notes: ")
    notes = prompt.split("\n")[0].removeprefix("Notes: ").split()
    words = parent.split()
    assert 0 < len(notes) < len(words)
    assert notes == [w for w in words if w in notes]  # kept in order
    assert "Write a food review from these notes." in prompt


def test_repair_never_cuts_a_plain_first_line():
    text = "Great chips\nThey are crunchy and fresh."
    assert repair(text) == text


# -- regeneration inside the APIs --------------------------------------------------------------


class ScriptedLM:
    """Replies from a script per call (then a valid text), records every call."""

    def __init__(self, script):
        self.script, self.calls = list(script), []

    def generate(self, prompts, *, temperature=1.0, max_new_tokens=64, seed=0):
        self.calls.append((list(prompts), seed))
        reply = self.script.pop(0) if self.script else None
        return [
            reply[i] if reply is not None else f"A fine cup of tea number {i}, calm and warm."
            for i in range(len(prompts))
        ]


def test_invalid_texts_are_regenerated_with_a_fresh_seed_and_counted():
    lm = ScriptedLM([["_ tea _", "Good tea, I drink it daily.", "Fill in the blanks please now"]])
    api = LLMRandomAPI(lm, topics=("tea",))
    texts, _ = api.sample_texts(3, np.random.default_rng(0))
    assert len(lm.calls) == 2 and len(lm.calls[1][0]) == 2  # only the two failures again
    assert lm.calls[0][1] != lm.calls[1][1]
    assert texts[1] == "Good tea, I drink it daily."
    assert all(TextChecker().check(t)[1] is None for t in texts)
    assert api.validity == {
        "generated": 3,
        "invalid": 2,
        "regenerated": 2,
        "fallback": 0,
        "reasons": {"mask": 1, "echo": 1},
    }


def test_retries_are_bounded_and_a_variation_falls_back_to_its_parent():
    lm = ScriptedLM([["_"] * 2] * 10)
    api = LLMVariationAPI(lm, mask_fraction=0.5, checker=TextChecker(retries=2))
    parents = ["Tasty chips, very crunchy.", "Smooth coffee, no bitterness."]
    out = api.vary_texts(parents, np.random.default_rng(1))
    assert len(lm.calls) == 3  # the first try and two retries
    assert out == parents
    assert api.validity["fallback"] == 2 and api.validity["regenerated"] == 4
    # fresh blanks for each retry (the prompts are drawn again)
    assert len({p for prompts, _ in lm.calls for p in prompts}) > 2


def test_the_random_api_falls_back_to_another_valid_text_of_the_same_label():
    lm = ScriptedLM([["Nice tea, warm and calm.", "_"]] + [["_"]] * 10)
    api = LLMRandomAPI(lm, {"a": "{kind} {label}"}, checker=TextChecker(retries=1))
    texts, labels = api.sample_texts(2, np.random.default_rng(0))
    assert texts == ["Nice tea, warm and calm."] * 2 and labels == ["a", "a"]
    assert api.validity["fallback"] == 1


# -- label-restricted votes ------------------------------------------------------------------

DIM = LABELLED_DIM


def test_label_block_puts_labels_further_apart_than_any_two_unit_vectors():
    X = with_labels(np.eye(3)[:2], ["a", "b"], ["a", "b"])
    assert np.linalg.norm(X[0] - X[1]) > 2.0
    assert LABEL_SCALE * math.sqrt(2) > 2.0


def test_each_private_text_votes_only_among_its_labels_candidates():
    model = labelled_text_pe().fit(REVIEWS, labels=REVIEW_LABELS)
    for t, record in enumerate(model.history_):
        labels = np.array(model.engine_.history_[t].candidates[:, DIM:].argmax(axis=1))
        counts = record.noisy_counts  # exact at epsilon = inf
        assert counts[labels == 0].sum() == pytest.approx(REVIEW_LABELS.count("great"))
        assert counts[labels == 1].sum() == pytest.approx(REVIEW_LABELS.count("other"))
    assert model.synthetic_.shape == (len(model.synthetic_texts_), DIM)
    assert set(model.synthetic_labels_) <= {"great", "other"}
    report = model.privacy_report_
    assert report["public_parameters"]["label_names"] == ["great", "other"]


def test_label_restricted_votes_keep_sigma_and_epsilon():
    plain = labelled_text_pe(epsilon=2.0).fit(REVIEWS)
    labelled = labelled_text_pe(epsilon=2.0).fit(REVIEWS, labels=REVIEW_LABELS)
    assert labelled.engine_.sigma_ == pytest.approx(plain.engine_.sigma_)
    assert labelled.privacy_report_["epsilon"] == pytest.approx(plain.privacy_report_["epsilon"])


def test_a_labelled_fit_without_a_public_label_list_is_refused():
    lm = TopicLM()
    model = TextPrivateEvolution(
        lm,
        HashEmbedder(DIM),
        n_synthetic=4,
        iterations=1,
        epsilon=1.0,
        delta=1e-4,
        random_api=LLMRandomAPI(lm),
    )
    with pytest.raises(ValueError, match="public label list"):
        model.fit(REVIEWS, labels=REVIEW_LABELS)
    with pytest.raises(ValueError, match="one label per text"):
        labelled_text_pe().fit(REVIEWS, labels=REVIEW_LABELS[:-1])
