#!/usr/bin/env python3
"""Generate kvscope's training corpus for the embedded default model.

Everything here is written for kvscope: a small, deterministic generator of
simple English in four families:

  weather   - "Today's weather is so nice." and many other forms
  food      - "This soup is so delicious." ...
  capitals  - facts about the capitals of 40 countries, in several forms
  stories   - short stories with a cast and a plot (corpus_stories.py), the
              tutorials' sentences inside some of them

The same seed always yields the same text.  Some sentence forms are kept
out of training entirely (HELD-OUT forms); the evaluation script uses them
to check that the model learned patterns, not a few memorised strings.

Usage:
  python3 tools/make_corpus.py [--out DIR] [--docs N]
writes DIR/train.txt and DIR/val.txt (one document per line).
"""

import argparse
import os
import random

SEED = 20240604

from corpus_words import *  # noqa: E402,F401,F403  (the word lists)
import corpus_stories  # noqa: E402


# ------------------------------------------------------------ weather family
# Each template is (name, function(rng) -> sentence).  Training forms and
# held-out forms are separate lists and never mixed.

def _adj(rng):
    return pick(rng, WEATHER_ALL)


def _adj_pair(rng):
    group = WEATHER_GOOD if rng.random() < 0.6 else WEATHER_BAD
    a = pick(rng, group)
    b = pick(rng, group)
    while b == a:
        b = pick(rng, group)
    return a, b


GOOD_ACTS = ["went to the park", "played outside", "had a picnic",
             "walked to the beach", "sat in the garden", "rode our bikes"]
BAD_ACTS = ["stayed at home", "took an umbrella", "wore a warm coat",
            "read books inside", "drank hot tea", "played games inside"]


def _activity(rng, a):
    goods = {w for w, _ in WEATHER_GOOD}
    return rng.choice(GOOD_ACTS if a in goods else BAD_ACTS)


WEATHER_TRAIN = [
    ("today_so", 30, lambda r: "Today's weather is so %s." % _adj(r)),
    ("today_so_and", 8, lambda r: "Today's weather is so %s and %s." % _adj_pair(r)),
    ("today_so_that", 6, lambda r: (lambda a: "Today's weather is so %s that we %s." % (a, _activity(r, a)))(_adj(r))),
    ("today_is", 5, lambda r: "Today's weather is %s." % _adj(r)),
    ("weather_today", 6, lambda r: "The weather today is %s and %s." % _adj_pair(r)),
    ("weather_so_today", 5, lambda r: "The weather is so %s today." % _adj(r)),
    ("outside", 4, lambda r: "It is %s outside today." % _adj(r)),
    ("yesterday", 4, lambda r: "Yesterday the weather was so %s." % _adj(r)),
    ("tomorrow", 4, lambda r: "Tomorrow the weather will be %s." % _adj(r)),
    ("in_city", 5, lambda r: "The weather in %s is %s today." % (r.choice(CITIES), _adj(r))),
    ("what_a", 3, lambda r: "What a %s day it is!" % _adj(r)),
    ("i_like", 3, lambda r: "I like it when the weather is %s." % _adj(r)),
    ("how_is", 4, lambda r: "How is the weather today? It is so %s." % _adj(r)),
    ("was_all_day", 3, lambda r: "The weather was %s all day." % _adj(r)),
    ("will_be_and", 2, lambda r: "It will be %s and %s tomorrow." % _adj_pair(r)),
    ("name_said", 3, lambda r: "%s said it was %s outside." % (r.choice(NAMES_M + NAMES_F), _adj(r))),
    ("morning_evening", 2, lambda r: "In the morning it was %s, but in the evening it was %s." % (_adj(r), _adj(r))),
    ("days_getting", 2, lambda r: "The days are getting %s." % _adj(r)),
    ("feels_so", 3, lambda r: "It feels so %s today." % _adj(r)),
]

WEATHER_HELDOUT = [
    ("ho_outside_so", 1, lambda r: "Outside, the weather is so %s." % _adj(r)),
    ("ho_friend_said", 1, lambda r: "My friend said the weather was %s." % _adj(r)),
    ("ho_morning_felt", 1, lambda r: "This morning the weather felt so %s." % _adj(r)),
    ("ho_look_getting", 1, lambda r: "Look, the weather is getting %s." % _adj(r)),
]


# --------------------------------------------------------------- food family

def _food(rng):
    return rng.choice(FOODS)


def _fadj(rng):
    return pick(rng, FOOD_ADJ)


def _fadj_pair(rng):
    a = _fadj(rng)
    b = _fadj(rng)
    while b == a:
        b = _fadj(rng)
    return a, b


def _this_food(rng):
    return "This %s is" % _food(rng)


def _the_food_was(rng):
    return "The %s was" % _food(rng)


FOOD_TRAIN = [
    ("this_so", 25, lambda r: "%s so %s." % (_this_food(r), _fadj(r))),
    ("the_was", 10, lambda r: "%s %s." % (_the_food_was(r), _fadj(r))),
    ("made", 8, lambda r: "%s made %s for dinner. It was so %s." % (r.choice(NAMES_M + NAMES_F), some(_food(r)), _fadj(r))),
    ("tastes", 8, lambda r: "This %s tastes so %s." % (_food(r), _fadj(r))),
    ("cafe", 6, lambda r: "The %s at the cafe is %s and %s." % ((_food(r),) + _fadj_pair(r))),
    ("ate", 8, lambda r: "I ate %s and it was so %s." % (some(_food(r)), _fadj(r))),
    ("what_a", 4, lambda r: "What %s %s!" % (article(_fadj(r)), _food(r))),
    ("mum", 5, lambda r: "My %s makes the most %s %s." % (r.choice(["mother", "father", "grandmother", "sister"]), _fadj(r), _food(r))),
    ("we_had", 5, lambda r: "We had %s %s for lunch." % (_fadj(r), _food(r))),
    ("always_here", 3, lambda r: "The %s is always %s here." % (_food(r), _fadj(r))),
    ("names_food", 3, lambda r: "%s's %s was so %s." % (r.choice(NAMES_M + NAMES_F), _food(r), _fadj(r))),
    ("felt", 2, lambda r: "The %s felt %s and %s." % ((_food(r),) + _fadj_pair(r))),
]

FOOD_HELDOUT = [
    ("ho_smells", 1, lambda r: "Wow, the %s smells so %s." % (_food(r), _fadj(r))),
    ("ho_agreed", 1, lambda r: "Everyone agreed that the %s was %s." % (_food(r), _fadj(r))),
    ("ho_always", 1, lambda r: "Her %s is always %s." % (_food(r), _fadj(r))),
    ("ho_bowl", 1, lambda r: "A bowl of %s is so %s." % (_food(r), _fadj(r))),
]


# ----------------------------------------------------------- capitals family

def _cc(rng):
    return rng.choice(CAPITALS)


CAPITAL_TRAIN = [
    ("the_capital_of", 30, lambda r: (lambda c, k: "The capital of %s is %s." % (c, k))(*_cc(r))),
    ("is_the_capital", 12, lambda r: (lambda c, k: "%s is the capital of %s." % (k, c))(*_cc(r))),
    ("what_is", 10, lambda r: (lambda c, k: "What is the capital of %s? It is %s." % (c, k))(*_cc(r))),
    ("capital_city", 8, lambda r: (lambda c, k: "The capital city of %s is %s." % (c, k))(*_cc(r))),
    ("is_in", 6, lambda r: (lambda c, k: "%s is a big city in %s." % (k, c))(*_cc(r))),
    ("lives_in", 6, lambda r: (lambda c, k: "%s lives in %s, the capital of %s." % (r.choice(NAMES_M + NAMES_F), k, c))(*_cc(r))),
    ("visit", 6, lambda r: (lambda c, k: "If you go to %s, you can visit %s, its capital." % (c, k))(*_cc(r))),
    ("flew", 5, lambda r: (lambda c, k: "%s flew to %s to see the capital of %s." % (r.choice(NAMES_M + NAMES_F), k, c))(*_cc(r))),
    ("two", 5, lambda r: (lambda a, b: "The capital of %s is %s, and the capital of %s is %s." % (a[0], a[1], b[0], b[1]))(*r.sample(CAPITALS, 2))),
]

CAPITAL_HELDOUT = [
    ("ho_possessive", 1, lambda r: (lambda c, k: "%s's capital is %s." % (c, k))(*_cc(r))),
    ("ho_which_city", 1, lambda r: (lambda c, k: "Which city is the capital of %s? The answer is %s." % (c, k))(*_cc(r))),
    ("ho_do_you_know", 1, lambda r: (lambda c, k: "Do you know the capital of %s? It is %s." % (c, k))(*_cc(r))),
    ("ho_main_city", 1, lambda r: (lambda c, k: "The main city and capital of %s is %s." % (c, k))(*_cc(r))),
]


# ------------------------------------------------------------- documents

FAMILIES = {
    "weather": (WEATHER_TRAIN, WEATHER_HELDOUT),
    "food": (FOOD_TRAIN, FOOD_HELDOUT),
    "capitals": (CAPITAL_TRAIN, CAPITAL_HELDOUT),
}
# Document weights.  A story is about six times longer than the other
# documents, so by tokens this is roughly stories 66%, weather 12%, food 7%,
# capitals 15%.
FAMILY_WEIGHTS = [("weather", 28), ("food", 18), ("capitals", 30), ("stories", 24)]


def sentence(rng, family, heldout=False):
    """One sentence of `family` from the training or held-out forms."""
    if family == "stories":
        return corpus_stories.make_story(rng, heldout)
    forms = FAMILIES[family][1 if heldout else 0]
    name_fn = pick(rng, [((n, f), w) for n, w, f in forms])
    return name_fn[1](rng)


def make_document(rng):
    """One training document: 1-3 sentences from one family, or a story."""
    family = pick(rng, FAMILY_WEIGHTS)
    if family == "stories":
        return corpus_stories.make_story(rng)
    n = pick(rng, [(1, 55), (2, 30), (3, 15)])
    return " ".join(sentence(rng, family) for _ in range(n))


def make_documents(n, seed):
    rng = random.Random(seed)
    return [make_document(rng) for _ in range(n)]


def heldout_check(docs):
    """Make sure no held-out sentence form leaked into training text."""
    markers = ["Outside, the weather", "My friend said the weather",
               "This morning the weather felt", "Look, the weather is getting",
               "smells so", "Everyone agreed", "A bowl of",
               "'s capital is", "Which city", "Do you know", "The main city",
               "After lunch", "Near the", "Later that day", "Everyone at"]
    markers += ["Her %s is always" % f for f in FOODS]
    for d in docs:
        for m in markers:
            assert m not in d, (m, d)
    # "weather is so" is never followed by a food word.
    for d in docs:
        i = d.find("weather is so ")
        while i >= 0:
            nxt = d[i + len("weather is so "):].split()[0].strip(".,!?")
            assert nxt not in FOOD_WORDS, d
            i = d.find("weather is so ", i + 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "_out"))
    ap.add_argument("--docs", type=int, default=200000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    train = make_documents(args.docs, SEED)
    val = make_documents(max(1, args.docs // 50), SEED + 1)
    heldout_check(train + val)
    for name, docs in (("train.txt", train), ("val.txt", val)):
        with open(os.path.join(args.out, name), "w", encoding="utf-8") as f:
            for d in docs:
                f.write(d + "\n")
    chars = sum(len(d) for d in train)
    print("corpus: %d train docs (%d chars), %d val docs -> %s"
          % (len(train), chars, len(val), args.out))


if __name__ == "__main__":
    main()
