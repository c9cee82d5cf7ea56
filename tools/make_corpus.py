#!/usr/bin/env python3
"""Generate kvscope's training corpus for the embedded default model.

Everything here is written for kvscope: a small, deterministic generator of
simple English in four families:

  weather   - "Today's weather is so nice." and many other forms
  food      - "This soup is so delicious." ...
  capitals  - facts about the capitals of 40 countries, in several forms
  stories   - short everyday stories built from sentence templates

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

# ---------------------------------------------------------------- word lists

# Weather adjectives with sampling weights.  " nice" and " warm" are the
# most common continuations of "Today's weather is so".
WEATHER_GOOD = [("nice", 30), ("warm", 24), ("sunny", 9), ("lovely", 4),
                ("bright", 4), ("mild", 3), ("calm", 3), ("hot", 4),
                ("clear", 2), ("pleasant", 2)]
WEATHER_BAD = [("cold", 8), ("rainy", 6), ("windy", 6), ("cloudy", 4),
               ("cool", 4), ("grey", 2), ("foggy", 2), ("chilly", 2),
               ("stormy", 2), ("snowy", 2), ("wet", 2), ("dry", 1)]
WEATHER_ALL = WEATHER_GOOD + WEATHER_BAD
WEATHER_WORDS = sorted({w for w, _ in WEATHER_ALL})

# Food words.  Food adjectives never overlap with weather adjectives, and
# "weather is so" is never followed by one of them.
FOOD_ADJ = [("delicious", 30), ("tasty", 18), ("sweet", 12), ("fresh", 10),
            ("yummy", 6), ("salty", 4), ("spicy", 4), ("creamy", 4),
            ("juicy", 3), ("crunchy", 3), ("sour", 2), ("soft", 3)]
FOOD_WORDS = sorted({w for w, _ in FOOD_ADJ})
FOODS = ["soup", "cake", "bread", "pie", "pizza", "salad", "apple", "pasta",
         "rice", "cheese", "chocolate", "tea", "coffee", "juice", "cookie",
         "orange", "pear", "sandwich", "fish", "stew", "curry", "tart",
         "pudding", "lemonade", "banana", "carrot", "omelette", "mango"]
# Foods that take "some" rather than "a"/"an".
FOOD_MASS = {"soup", "bread", "rice", "cheese", "chocolate", "tea", "coffee",
             "juice", "pasta", "salad", "fish", "stew", "curry", "pudding",
             "lemonade"}

# (country, capital).  Single-word capitals only, so that each capital is one
# word of the lesson vocabulary.
CAPITALS = [
    ("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"),
    ("Spain", "Madrid"), ("Germany", "Berlin"), ("England", "London"),
    ("Russia", "Moscow"), ("China", "Beijing"), ("Egypt", "Cairo"),
    ("Kenya", "Nairobi"), ("Peru", "Lima"), ("Chile", "Santiago"),
    ("Canada", "Ottawa"), ("Greece", "Athens"), ("Portugal", "Lisbon"),
    ("Ireland", "Dublin"), ("Norway", "Oslo"), ("Sweden", "Stockholm"),
    ("Finland", "Helsinki"), ("Denmark", "Copenhagen"), ("Poland", "Warsaw"),
    ("Austria", "Vienna"), ("Hungary", "Budapest"), ("Turkey", "Ankara"),
    ("Iran", "Tehran"), ("Thailand", "Bangkok"), ("Vietnam", "Hanoi"),
    ("Cuba", "Havana"), ("Australia", "Canberra"), ("Belgium", "Brussels"),
    ("Switzerland", "Bern"), ("Nigeria", "Abuja"), ("Ghana", "Accra"),
    ("Morocco", "Rabat"), ("Colombia", "Bogota"), ("Venezuela", "Caracas"),
    ("Romania", "Bucharest"), ("Ukraine", "Kyiv"), ("Nepal", "Kathmandu"),
    ("Scotland", "Edinburgh"),
]
COUNTRIES = [c for c, _ in CAPITALS]
CITIES = [k for _, k in CAPITALS]

NAMES_M = ["Tom", "Ben", "Sam", "Max", "Leo", "Jack", "Noah", "Paul",
           "Tim", "Dan", "Alex", "Oliver"]
NAMES_F = ["Anna", "Lily", "Mia", "Emma", "Sara", "Lucy", "Zoe", "Kate",
           "Ella", "Nina", "Rosa", "Amy"]
RELATIONS = ["mother", "father", "sister", "brother", "friend", "dog",
             "grandmother", "grandfather", "teacher", "cousin"]
COLOURS = ["red", "blue", "green", "yellow", "big", "small", "new", "old"]
OBJECTS = ["ball", "kite", "book", "hat", "box", "bike", "cup", "bag",
           "boat", "car", "doll", "drum"]
ANIMALS = ["cat", "dog", "bird", "duck", "horse", "cow", "fox", "rabbit",
           "frog", "fish"]

# Place -> things one does there (past tense).
PLACES = {
    "park": ["played with a ball", "flew a kite", "ran on the grass",
             "fed the ducks", "sat under a tree"],
    "beach": ["swam in the sea", "built a sand castle", "found a shell",
              "walked by the water", "played in the sand"],
    "market": ["bought some apples", "looked at the flowers",
               "bought fresh bread", "met an old friend"],
    "school": ["read a book", "painted a picture", "sang a song",
               "learned about numbers", "played with friends"],
    "library": ["read a book", "found a map", "read about animals",
                "wrote a story"],
    "garden": ["watered the flowers", "picked some pears",
               "planted a tree", "saw a bird"],
    "zoo": ["saw a lion", "fed the goats", "watched the monkeys",
            "saw a big bear"],
    "river": ["caught a fish", "threw stones in the water",
              "watched the boats", "sat on the bank"],
    "farm": ["fed the cows", "rode a horse", "collected eggs",
             "helped in the field"],
    "lake": ["went on a boat", "swam in the lake", "fed the ducks",
             "watched the birds"],
    "forest": ["walked under the trees", "saw a fox", "picked berries",
               "found a big stick"],
    "shop": ["bought a new hat", "bought some milk", "looked at toys",
             "paid for a cake"],
}
PLACE_NAMES = sorted(PLACES)
ENDINGS = ["had a long sleep", "ate a big dinner", "told everyone about it",
           "went to bed early", "drew a picture of the day",
           "had a warm bath", "read a story", "smiled all evening"]
FEELINGS = ["happy", "tired", "glad", "excited", "sleepy", "proud"]


def pick(rng, weighted):
    """Weighted choice from a list of (item, weight)."""
    total = sum(w for _, w in weighted)
    r = rng.random() * total
    for item, w in weighted:
        r -= w
        if r < 0:
            return item
    return weighted[-1][0]


def article(word):
    return ("an " if word[0] in "aeiou" else "a ") + word


def some(food):
    return "some " + food if food in FOOD_MASS else article(food)


def cap(s):
    return s[0].upper() + s[1:]


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


# ------------------------------------------------------------- story family
# A story is built from a few sentence templates that share a cast.

class Cast:
    def __init__(self, rng):
        if rng.random() < 0.5:
            self.name, self.he, self.his = rng.choice(NAMES_M), "he", "his"
        else:
            self.name, self.he, self.his = rng.choice(NAMES_F), "she", "her"
        self.rel = rng.choice(RELATIONS)
        self.place = rng.choice(PLACE_NAMES)
        self.friend = rng.choice([n for n in NAMES_M + NAMES_F if n != self.name])
        self.obj = rng.choice(OBJECTS)
        self.colour = rng.choice(COLOURS)
        self.animal = rng.choice(ANIMALS)


def _act(rng, c):
    return rng.choice(PLACES[c.place])


STORY_OPEN = [
    lambda r, c: "One day, %s went to the %s with %s %s." % (c.name, c.place, c.his, c.rel),
    lambda r, c: "%s and %s went to the %s." % (c.name, c.friend, c.place),
    lambda r, c: "In the morning, %s walked to the %s." % (c.name, c.place),
    lambda r, c: "%s had %s %s." % (c.name, article(c.colour), c.obj),
    lambda r, c: "Once upon a time, there was a girl named %s." % c.name if c.he == "she" else
                 "Once upon a time, there was a boy named %s." % c.name,
]

STORY_MID = [
    lambda r, c: "At the %s, %s %s." % (c.place, c.he, _act(r, c)),
    lambda r, c: "%s %s with %s." % (cap(c.he), _act(r, c), c.friend),
    lambda r, c: "They %s." % _act(r, c),
    lambda r, c: "Then %s saw %s near the %s." % (c.he, article(c.animal), c.place),
    lambda r, c: "The weather was so %s." % _adj(r),
    lambda r, c: "They ate %s and it was %s." % (some(_food(r)), _fadj(r)),
    lambda r, c: "%s %s said, \"This is fun!\"" % (cap(c.his), c.rel),
    lambda r, c: "%s took %s %s %s to the %s." % (c.name, c.his, c.colour, c.obj, c.place),
    lambda r, c: "%s felt very %s." % (c.name, r.choice(FEELINGS)),
    lambda r, c: (lambda ck: "%s told %s about %s, the capital of %s." % (c.name, c.friend, ck[1], ck[0]))(_cc(r)),
]

STORY_END = [
    lambda r, c: "In the evening, %s came home and %s." % (c.he, r.choice(ENDINGS)),
    lambda r, c: "It was a good day for %s." % c.name,
    lambda r, c: "At night, %s %s." % (c.name, r.choice(ENDINGS)),
    lambda r, c: "%s wanted to go back to the %s soon." % (c.name, c.place),
]

# Held-out story sentence forms (never in training).
STORY_HELDOUT_MID = [
    lambda r, c: "After lunch, %s and %s decided to visit the %s." % (c.name, c.friend, c.place),
    lambda r, c: "Near the %s, %s found %s %s." % (c.place, c.he, article(c.colour), c.obj),
    lambda r, c: "Later that day, %s %s again." % (c.he, _act(r, c)),
    lambda r, c: "Everyone at the %s was very %s." % (c.place, r.choice(FEELINGS)),
]


def make_story(rng, heldout=False):
    c = Cast(rng)
    parts = [rng.choice(STORY_OPEN)(rng, c)]
    mids = STORY_HELDOUT_MID if heldout else STORY_MID
    for _ in range(rng.randint(1, 3)):
        parts.append(rng.choice(mids)(rng, c))
    parts.append(rng.choice(STORY_END)(rng, c))
    return " ".join(parts)


# ------------------------------------------------------------- documents

FAMILIES = {
    "weather": (WEATHER_TRAIN, WEATHER_HELDOUT),
    "food": (FOOD_TRAIN, FOOD_HELDOUT),
    "capitals": (CAPITAL_TRAIN, CAPITAL_HELDOUT),
}
# Document weights.  Stories are about three times longer than the other
# documents, so by tokens this is roughly weather 25%, food 18%,
# capitals 32%, stories 25%.
FAMILY_WEIGHTS = [("weather", 30), ("food", 23), ("capitals", 37), ("stories", 10)]


def sentence(rng, family, heldout=False):
    """One sentence of `family` from the training or held-out forms."""
    if family == "stories":
        return make_story(rng, heldout)
    forms = FAMILIES[family][1 if heldout else 0]
    name_fn = pick(rng, [((n, f), w) for n, w, f in forms])
    return name_fn[1](rng)


def make_document(rng):
    """One training document: 1-3 sentences from one family, or a story."""
    family = pick(rng, FAMILY_WEIGHTS)
    if family == "stories":
        return make_story(rng)
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
