"""Word lists shared by kvscope's corpus generator (make_corpus.py) and its
story generator (corpus_stories.py), and the small helpers both use.

Every word here is kvscope's own choice; the lists decide the corpus's
vocabulary, so the tokenizer trainer (train_default_model.py) makes the
lesson words among them single tokens.
"""

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
