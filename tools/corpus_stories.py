"""Short stories for kvscope's training corpus: a hero, a friend, a family,
a pet and a toy, and one of a dozen plots told in everyday words, with the
tutorials' sentences inside ("Today's weather is so nice," said Mom; "The
capital of France is Paris," said Lily).

make_story(rng) gives one story as one line of text.  The choices are
weighted so that the most common story opens "Once upon a time, there was a
little girl named Lily." and she "loved to play with her dog", but every slot
has many fillers, so a model trained on these stories has real choices to
make after "named", "play with her", "went to the" and so on.

HELD-OUT sentences (make_story(rng, heldout=True)) never appear in training;
the evaluation uses them.
"""

from corpus_words import (CAPITALS, FOOD_ADJ, FOODS, FOOD_MASS, WEATHER_BAD,
                          WEATHER_GOOD, article, cap, pick, some)

# ------------------------------------------------------------- the cast

GIRLS = [("Lily", 14), ("Mia", 4), ("Anna", 4), ("Emma", 3), ("Sara", 3),
         ("Lucy", 3), ("Zoe", 2), ("Kate", 2), ("Ella", 2), ("Nina", 2),
         ("Rosa", 2), ("Amy", 3), ("Sue", 2), ("Jane", 2), ("Molly", 2),
         ("Daisy", 2), ("Sophie", 2), ("Lisa", 2)]
BOYS = [("Tom", 12), ("Ben", 4), ("Sam", 4), ("Max", 3), ("Leo", 3),
        ("Jack", 3), ("Noah", 2), ("Paul", 2), ("Tim", 3), ("Dan", 2),
        ("Alex", 2), ("Oliver", 2), ("Bob", 3), ("Joe", 2), ("Timmy", 3),
        ("Billy", 2), ("Jake", 2), ("Finn", 2)]
# Animals that are the hero of a story, with their names.
ANIMAL_HEROES = [("cat", "Kitty"), ("dog", "Spot"), ("bird", "Pip"),
                 ("bunny", "Fluffy"), ("bear", "Teddy"), ("mouse", "Squeak"),
                 ("fox", "Rusty"), ("frog", "Hoppy"), ("puppy", "Buddy"),
                 ("kitten", "Mittens"), ("duck", "Ducky"), ("owl", "Hoot")]
STORY_NAMES = [n for n, _ in GIRLS + BOYS] + [n for _, n in ANIMAL_HEROES]

HERO_ADJ = [("little", 10), ("kind", 2), ("happy", 2), ("curious", 2),
            ("brave", 1), ("small", 1), ("shy", 1), ("friendly", 1)]
FAMILY = [("mom", 8), ("dad", 6), ("mother", 2), ("father", 2),
          ("grandma", 3), ("grandpa", 2), ("sister", 2), ("brother", 2),
          ("aunt", 1), ("uncle", 1)]
PETS = [("dog", 8), ("cat", 6), ("puppy", 2), ("kitten", 2), ("bird", 2),
        ("bunny", 2), ("fish", 1), ("turtle", 1)]
TOYS = [("ball", 8), ("kite", 4), ("doll", 4), ("teddy bear", 4),
        ("toy car", 3), ("truck", 2), ("book", 3), ("drum", 1),
        ("boat", 2), ("hat", 2), ("bike", 2), ("robot", 2), ("train", 2),
        ("balloon", 3), ("blanket", 1), ("puzzle", 1)]
COLOURS = [("red", 6), ("blue", 5), ("green", 3), ("yellow", 3),
           ("pink", 2), ("big", 4), ("small", 2), ("new", 3), ("shiny", 2),
           ("old", 1), ("soft", 1), ("purple", 1)]
# Where a story goes, with what one does there (past tense) and where a
# lost thing might be found there.
STORY_PLACES = {
    "park": (10, ["played on the swings", "ran on the grass", "fed the ducks",
                  "flew a kite", "played with a ball", "sat under a tree",
                  "went down the slide"], "under a bench"),
    "beach": (5, ["built a sand castle", "swam in the sea",
                  "found a pretty shell", "played in the sand",
                  "walked by the water"], "in the sand"),
    "garden": (5, ["watered the flowers", "picked some flowers",
                   "planted a seed", "saw a butterfly", "dug in the dirt"],
               "behind a bush"),
    "forest": (3, ["walked under the tall trees", "picked berries",
                   "saw a little fox", "found a big stick",
                   "listened to the birds"], "under a big tree"),
    "zoo": (3, ["saw a lion", "watched the monkeys", "fed the goats",
                "saw a tall giraffe"], "near the gate"),
    "farm": (3, ["fed the cows", "rode a horse", "collected eggs",
                 "played with the lambs"], "in the barn"),
    "lake": (2, ["went on a boat", "fed the ducks", "swam in the lake",
                 "watched the fish"], "by the water"),
    "school": (3, ["read a book", "painted a picture", "sang a song",
                   "played with friends"], "under a desk"),
    "market": (2, ["bought some apples", "looked at the flowers",
                   "bought fresh bread"], "under a table"),
    "river": (2, ["threw stones in the water", "watched the boats",
                  "caught a fish"], "by the bank"),
    "playground": (3, ["played on the slide", "climbed the ladder",
                       "played on the swings", "ran with friends"],
                   "under the slide"),
}
STORY_PLACE_NAMES = sorted(STORY_PLACES)
# "in the park" but "at the beach", "on the farm"
AT_PLACE = {"park": "in", "beach": "at", "garden": "in", "forest": "in",
            "zoo": "at", "farm": "on", "lake": "at", "school": "at",
            "market": "at", "river": "by", "playground": "at"}
PLAY_WITH = [("with {his} dog", 6), ("in the park", 5), ("with {his} ball", 4),
             ("with {his} friends", 5), ("in the snow", 2), ("with {his} cat", 3),
             ("in the garden", 3), ("with {his} mom", 3), ("outside", 4),
             ("with {his} toys", 4), ("in the sand", 1), ("with {his} kite", 1),
             ("in the rain", 1), ("with {his} sister", 1), ("with {his} brother", 1)]
HOBBIES = [("draw pictures", 3), ("sing songs", 3), ("read books", 3),
           ("run fast", 2), ("climb trees", 2), ("dance", 2), ("help {his} mom", 2),
           ("look at the stars", 1), ("jump and play", 2), ("bake cakes", 1),
           ("play in the sun", 2), ("explore", 1)]
FEEL_GOOD = ["happy", "glad", "excited", "proud"]
FEEL_BAD = ["sad", "scared", "worried", "upset"]
ANIMALS = [("bird", 4), ("cat", 3), ("dog", 3), ("squirrel", 2), ("bunny", 2),
           ("frog", 2), ("duck", 2), ("puppy", 2), ("kitten", 2), ("butterfly", 1),
           ("turtle", 1), ("mouse", 1)]
ANIMAL_LOOK = ["sad", "lonely", "hungry", "cold", "lost", "tired"]
SNACKS = [("cookies", 3), ("apples", 2), ("cake", 2), ("bread", 1),
          ("sandwiches", 2), ("soup", 1), ("pie", 1)]
LESSONS_LEARNED = ["it is good to share", "it is good to help others",
                   "being kind is important", "friends make everything better",
                   "it is good to be brave", "it is good to say sorry",
                   "it is fun to try new things"]


class Cast:
    """Who is in one story, and the words that refer to them."""

    def __init__(self, rng):
        r = rng.random()
        if r < 0.12:
            self.kind, self.name = rng.choice(ANIMAL_HEROES)
            girl = rng.random() < 0.5
        else:
            girl = r < 0.6
            self.name = pick(rng, GIRLS if girl else BOYS)
            self.kind = "girl" if girl else "boy"
        self.he, self.his, self.him = ("she", "her", "her") if girl else ("he", "his", "him")
        fgirl = rng.random() < 0.5
        self.friend = pick(rng, [(n, w) for n, w in (GIRLS if fgirl else BOYS) if n != self.name])
        self.fhe, self.fhis, self.fhim = ("she", "her", "her") if fgirl else ("he", "his", "him")
        self.adj = pick(rng, HERO_ADJ)
        self.rel = pick(rng, FAMILY)
        self.pet = pick(rng, PETS)
        self.toy = pick(rng, TOYS)
        self.colour = pick(rng, COLOURS)
        self.place = pick(rng, [(p, v[0]) for p, v in STORY_PLACES.items()])
        self.animal = pick(rng, ANIMALS)

    def fields(self):
        return dict(N=self.name, he=self.he, He=cap(self.he), his=self.his,
                    His=cap(self.his), him=self.him, F=self.friend, fhe=self.fhe,
                    fHe=cap(self.fhe), fhis=self.fhis, fhim=self.fhim, kind=self.kind,
                    adj=self.adj, rel=self.rel, Rel=cap(self.rel), pet=self.pet,
                    toy=self.toy, colour=self.colour, place=self.place,
                    at_place=AT_PLACE[self.place] + " the " + self.place,
                    At_place=cap(AT_PLACE[self.place]) + " the " + self.place,
                    animal=self.animal, a_adj=article(self.adj),
                    a_toy=article(self.colour + " " + self.toy))


def say(rng, c, text, who=None):
    """A line of speech with one of the usual ways of reporting it."""
    who = who or c.name
    end = text[-1]
    body = text[:-1]
    form = rng.random()
    if form < 0.45:
        sep = "," if end == "." else end
        return '"%s%s" said %s.' % (body, sep, who)
    if form < 0.8:
        return '%s said, "%s%s"' % (cap(who), body, end)
    verb = "asked" if end == "?" else rng.choice(["said", "shouted", "smiled and said"])
    return '%s %s, "%s%s"' % (cap(who), verb, body, end)


def fill(rng, c, template):
    return template.format(**c.fields())


def act(rng, c):
    return rng.choice(STORY_PLACES[c.place][1])


# ------------------------------------------------------------- openings

def opening(rng, c):
    f = c.fields()
    forms = [
        (40, "Once upon a time, there was {a_adj} {kind} named {N}."),
        (8, "Once upon a time, in a small town, there lived {a_adj} {kind} named {N}."),
        (4, "Once upon a time, in a little village, there lived a {kind} named {N}."),
        (6, "Once upon a time, there was a {kind} named {N} who lived in a small house."),
        (3, "Once upon a time, there was a {kind} named {N} who lived on a farm."),
        (6, "{N} was {a_adj} {kind} who loved to " + pick(rng, HOBBIES) + "."),
        (5, "There was once {a_adj} {kind} named {N}."),
        (5, "{N} had {a_toy}."),
    ]
    return pick(rng, [(t, w) for w, t in forms]).format(**f)


def outing(rng, c):
    """An opening that goes somewhere at once, and what happens there."""
    f = c.fields()
    who = pick(rng, [("{his} {rel}", 5), ("{his} {pet}", 2), ("{his} friend {F}", 2)]).format(**f)
    they = "they" if not who.endswith(c.pet) else c.he
    first = pick(rng, [("One day, {N} went to the {place} with %s." % who, 10),
                       ("One day {N} went to the {place} with %s." % who, 5),
                       ("In the morning, {N} walked to the {place} with %s." % who, 3)]).format(**f)
    a1 = act(rng, c)
    a2 = act(rng, c)
    out = [first, "{At_place}, %s %s." % (they, a1)]
    if a2 != a1:
        out.append("Then %s %s." % (they, a2))
    out.append(rng.choice(["The sun was warm and the sky was blue.",
                           "{N} laughed and had a lot of fun.",
                           "{N} saw a little {animal} and smiled.",
                           "They ate " + pick(rng, SNACKS) + " for lunch."]))
    out.append(rng.choice(["In the evening, they went home. {N} was tired but happy.",
                           "When it was time to go home, {N} said, \"Can we come back tomorrow?\"",
                           "It was a good day for {N}."]))
    return [x.format(**f) for x in out]


def trait(rng, c):
    f = c.fields()
    forms = [
        (10, "{He} loved to play " + pick(rng, PLAY_WITH) + "."),
        (4, "{He} liked to " + pick(rng, HOBBIES) + "."),
        (4, "{He} had {a_toy} that {he} loved very much."),
        (3, "{He} lived with {his} mom and dad in a little house."),
        (3, "Every day, {he} played with {his} {pet}."),
        (2, "{He} was always happy and liked to smile."),
    ]
    return pick(rng, [(t, w) for w, t in forms]).format(**f).format(**f)


# ------------------------------------------------------------- plots
# Each plot returns its sentences; the hero's name and pronouns come from c.

def plot_lost_toy(rng, c):
    f = c.fields()
    where = rng.choice(["under the bed", "in the garden", "everywhere",
                        "in the kitchen", "in {his} room"]).format(**f)
    found = rng.choice(["under the table", "behind a tree", "in a box",
                        "under the bed", "in the garden", STORY_PLACES[c.place][2]])
    helper = rng.choice(["rel", "friend", "pet"])
    out = [fill(rng, c, "One day, {N} could not find {his} {toy}."),
           fill(rng, c, "{He} looked " + where + ", but it was not there."),
           fill(rng, c, "{N} felt " + rng.choice(FEEL_BAD) + ".")]
    if helper == "rel":
        out.append("{His} {rel} came and said, \"Don't be sad. Let's look together.\"")
        out.append("They looked and looked. At last, they found the {toy} %s." % found)
        out.append("{N} was so happy. " + rng.choice(['{He} said, "Thank you, {rel}!"',
                                                      "{He} gave {his} {rel} a big hug."]))
    elif helper == "friend":
        out.append("Then {his} friend {F} came to help.")
        out.append("{F} found the {toy} %s." % found)
        out.append("{N} was so happy. " + rng.choice(['{He} said, "Thank you, {F}!"',
                                                      "{He} gave {F} a big hug."]))
    else:
        out.append("Then {his} {pet} began to sniff around.")
        out.append("The {pet} found the {toy} %s!" % found)
        out.append("{N} was so happy. {He} gave the {pet} a big hug.")
    return [s.format(**f) for s in out]


def plot_new_friend(rng, c):
    look = rng.choice(ANIMAL_LOOK)
    out = [fill(rng, c, "One day, {N} saw a little {animal} {at_place}."),
           "The %s looked %s." % (c.animal, look),
           say(rng, c, "Hello, little %s! Do you want to play with me?" % c.animal)]
    if look == "hungry":
        out.append(fill(rng, c, "{N} gave the {animal} some food, and the {animal} was very happy."))
    elif look == "lost":
        out.append(fill(rng, c, "{N} helped the {animal} find its home."))
    else:
        out.append("The %s was happy to have a friend." % c.animal)
    out.append(rng.choice(["They played together all day.",
                           fill(rng, c, "They ran and played {at_place} until the sun went down.")]))
    out.append(fill(rng, c, rng.choice(["From that day on, {N} and the {animal} were best friends.",
                                        "{N} came back to see the {animal} every day."])))
    return out


def weather_line(rng, c, adj):
    """A tutorial sentence inside a story: "Today's weather is so nice"."""
    f = c.fields()
    forms = [
        (4, '{His} {rel} looked out of the window and said, "Today\'s weather is so %s!"'),
        (3, '"Today\'s weather is so %s," said {his} {rel}.'),
        (3, "{N} looked outside. Today's weather is so %s, {he} thought."),
        (2, '{N} ran to {his} {rel} and said, "Today\'s weather is so %s."'),
        (2, "The sky was " + ("blue" if adj in dict(WEATHER_GOOD) else "grey") + ". Today's weather is so %s."),
    ]
    return (pick(rng, [(t, w) for w, t in forms]) % adj).format(**f)


def plot_weather(rng, c):
    good = rng.random() < 0.7
    adj = pick(rng, WEATHER_GOOD if good else WEATHER_BAD)
    out = [fill(rng, c, rng.choice(["One morning, {N} woke up early.",
                                    "It was a new day.", "{N} woke up and jumped out of bed."])),
           weather_line(rng, c, adj)]
    if good:
        out.append(say(rng, c, "Let's go to the %s!" % c.place,
                       who="{his} {rel}".format(**c.fields()) if rng.random() < 0.4 else None))
        out.append(fill(rng, c, "{At_place}, {he} " + act(rng, c) + "."))
        out.append(fill(rng, c, rng.choice(["The sun was warm, and {N} was very happy.",
                                            "{N} played until it was time to go home.",
                                            "It was a perfect day."])))
    else:
        out.append(fill(rng, c, "{N} wanted to play outside, but {he} had to stay at home."))
        out.append(fill(rng, c, rng.choice(["So {he} and {his} {rel} made a big tent with blankets.",
                                            "So {he} drew a picture of the sun.",
                                            "So {he} played with {his} {toy} inside.",
                                            "So {he} read a book with {his} {rel}."])))
        out.append(fill(rng, c, rng.choice(["The next day, the sun came out, and {N} ran outside to play.",
                                            "{N} had fun inside, too."])))
    return out


def plot_capital(rng, c):
    country, city = rng.choice(CAPITALS)
    f = c.fields()
    if rng.random() < 0.6:
        out = [fill(rng, c, "At school, the teacher talked about other countries."),
               'The teacher asked, "What is the capital of %s?"' % country,
               fill(rng, c, "{N} put up {his} hand."),
               rng.choice(['"The capital of %s is %s," said %s.' % (country, city, c.name),
                           '%s said, "The capital of %s is %s."' % (c.name, country, city),
                           '%s said, "It is %s."' % (c.name, city)]),
               '"Very good!" said the teacher.',
               fill(rng, c, "{N} felt " + rng.choice(["proud", "happy", "glad"]) + ".")]
        if rng.random() < 0.4:
            other, ocity = rng.choice(CAPITALS)
            if other != country:
                out.insert(5, "Then %s said, \"And %s is the capital of %s.\"" % (c.friend, ocity, other))
        return out
    out = ["{N}'s family went on a trip to %s." % country,
           "They visited %s, the capital of %s." % (city, country),
           "{N} saw big houses, old streets and many people.",
           rng.choice(["{He} ate " + some(rng.choice(FOODS)) + " and it was so " + pick(rng, FOOD_ADJ) + ".",
                       "{He} bought a little gift for {his} friend {F}."]),
           "When {he} came home, {he} told {his} friend {F}, \"The capital of %s is %s!\"" % (country, city)]
    return [s.format(**f) for s in out]


def plot_food(rng, c):
    food = rng.choice(FOODS)
    adj = pick(rng, FOOD_ADJ)
    out = [fill(rng, c, "One day, {N} and {his} {rel} made " + some(food) + " together."),
           fill(rng, c, rng.choice(["{N} helped to mix everything in a big bowl.",
                                    "{N} put the {food} on the table.".replace("{food}", food),
                                    "They worked and laughed in the kitchen."])),
           "When it was ready, %s tasted it." % c.name,
           say(rng, c, "This %s is so %s!" % (food, adj)),
           fill(rng, c, "They shared it with {his} friend {F}, and everyone was happy.")]
    return out


def plot_share(rng, c):
    f = c.fields()
    out = ["{N} had {a_toy}.",
           "{His} friend {F} wanted to play with it too.",
           "At first, {N} did not want to share.",
           "{F} was sad and started to cry.",
           "{N} saw that {F} was sad and said, \"I'm sorry. You can play with my {toy}.\"",
           "They played with the {toy} together and had a lot of fun.",
           "{N} learned that " + rng.choice(LESSONS_LEARNED[:3]) + "."]
    return [s.format(**f) for s in out]


def plot_trip(rng, c):
    f = c.fields()
    a1 = act(rng, c)
    a2 = act(rng, c)
    while a2 == a1 and len(STORY_PLACES[c.place][1]) > 1:
        a2 = act(rng, c)
    out = ["One sunny day, {N} and {his} {rel} went to the {place}.",
           "They " + a1 + ".",
           "Then they " + a2 + ".",
           rng.choice(["{N} saw a little {animal} and smiled.",
                       "They ate " + pick(rng, SNACKS) + " for lunch.",
                       "{N} laughed and laughed."]),
           "In the evening, they went home. {N} was tired but happy."]
    return [s.format(**f) for s in out]


def plot_brave(rng, c):
    f = c.fields()
    thing = rng.choice([("climb the big tree", "climbed"), ("swim in the lake", "swam"),
                        ("ride a bike", "rode"), ("go down the big slide", "went down")])
    out = ["{N} wanted to " + thing[0] + ".",
           "But {he} was scared.",
           "{His} friend {F} said, \"You can do it, {N}! I will help you.\"",
           "{N} took a deep breath and tried.",
           "{He} " + thing[1] + (" it" if thing[1] in ("climbed", "rode") else "") + "!",
           "{N} was so proud. " + rng.choice(["{He} learned that it is good to be brave.",
                                              "{He} and {F} laughed and played all day."])]
    out = [s.replace("climbed it", "climbed the tree").replace("rode it", "rode the bike") for s in out]
    return [s.format(**f) for s in out]


def plot_pet(rng, c):
    f = c.fields()
    out = ["{N} had a {pet}." if rng.random() < 0.5 else "{N} had a little {pet} named " +
           rng.choice(["Spot", "Max", "Bella", "Coco", "Sunny", "Lucky"]) + ".",
           "The {pet} liked to run and play.",
           "One day, the {pet} ran away into the {place}.",
           "{N} was " + rng.choice(FEEL_BAD) + ". {He} called, \"Come back!\"",
           "{He} looked for the {pet} " + rng.choice(["everywhere", "all day", "with {his} {rel}"]) + ".",
           "At last, {he} found it " + STORY_PLACES[c.place][2] + ".",
           "{N} gave the {pet} a big hug and took it home."]
    return [s.format(**f).format(**f) for s in out]


def plot_surprise(rng, c):
    f = c.fields()
    gift = pick(rng, TOYS)
    out = ["It was {N}'s birthday.",
           "{His} {rel} gave {him} a box with a " + rng.choice(["red", "blue", "big"]) + " bow.",
           "{N} opened the box. Inside was a " + pick(rng, COLOURS) + " " + gift + "!",
           say(rng, c, "Thank you! I love it!"),
           "{N} played with the " + gift + " all day.",
           "Then they all ate " + rng.choice(["cake", "cookies", "ice cream"]) + " together."]
    return [s.format(**f) for s in out]


def plot_help(rng, c):
    f = c.fields()
    task = rng.choice([("clean the house", "cleaned the floor and put the toys away"),
                       ("plant flowers", "dug little holes and put in the seeds"),
                       ("make dinner", "washed the carrots and set the table"),
                       ("wash the car", "got a bucket and washed the car with soap")])
    out = ["One day, {his} {rel} had to " + task[0] + ".",
           say(rng, c, "Can I help?"),
           "\"Yes, please,\" said {his} {rel}.",
           "{N} " + task[1] + ".",
           "When they were done, {his} {rel} said, \"Thank you, {N}. You are a big help.\"",
           "{N} felt " + rng.choice(FEEL_GOOD) + "."]
    return [s.format(**f) for s in out]


def plot_garden(rng, c):
    f = c.fields()
    flower = pick(rng, [("red", 3), ("yellow", 3), ("pink", 2), ("purple", 1), ("blue", 1)])
    out = ["One day, {N} and {his} {rel} planted a little seed in the garden.",
           "Every day, {N} gave the seed some water.",
           "{N} waited and waited. " + rng.choice(["Nothing happened.", "{He} wanted to see it grow."]),
           "Then one morning, {he} saw a small green plant!",
           "The plant grew and grew. Soon there was a big " + flower + " flower.",
           say(rng, c, "Look, %s! Our flower is so pretty!" % c.rel)]
    return [x.format(**f) for x in out]


def plot_night(rng, c):
    f = c.fields()
    out = ["At night, {N} looked out of the window.",
           "{He} saw the big moon and many bright stars.",
           say(rng, c, rng.choice(["The stars are so pretty!", "I want to fly to the moon!"])),
           "{His} {rel} sat with {him} and told {him} a story about the stars.",
           "Soon {N} closed {his} eyes and fell asleep with a smile."]
    return [x.format(**f) for x in out]


def plot_race(rng, c):
    f = c.fields()
    winner = rng.choice(["{N}", "{F}"]).format(**f)
    out = ["One day, {N} and {his} friend {F} had a race to the big tree.",
           say(rng, c, "Ready, set, go!", who=c.friend),
           "They ran as fast as they could.",
           "%s got to the tree first." % winner,
           "They were both tired, so they sat down in the shade and laughed.",
           "\"Let's race again tomorrow,\" said %s." % (c.friend if winner == c.name else c.name)]
    return [x.format(**f) for x in out]


def plot_puddles(rng, c):
    f = c.fields()
    boots = pick(rng, [("red", 3), ("yellow", 3), ("green", 1), ("blue", 2)])
    out = ["It rained all night.",
           "In the morning, there were big puddles everywhere.",
           "{N} put on {his} " + boots + " boots and ran outside.",
           "{He} jumped in the puddles. Splash!",
           "{His} {rel} laughed and jumped in the puddles too.",
           "They came home wet and happy, and they drank warm milk."]
    return [x.format(**f) for x in out]


PLOTS = [(plot_lost_toy, 10), (plot_new_friend, 10), (plot_weather, 12),
         (plot_capital, 8), (plot_food, 6), (plot_share, 7), (plot_trip, 9),
         (plot_brave, 6), (plot_pet, 6), (plot_surprise, 5), (plot_help, 5),
         (plot_garden, 5), (plot_night, 4), (plot_race, 4), (plot_puddles, 4)]

ENDINGS = ["From that day on, {N} and {F} were best friends.",
           "{N} went to bed with a big smile.", "It was the best day ever.",
           "{N} was very happy.", "They all had a lot of fun.",
           "{N} learned that {lesson}.", "And they lived happily ever after."]

# Held-out story sentences (never in training; the evaluation uses them).
STORY_HELDOUT = [
    "After lunch, {N} and {F} decided to visit the {place}.",
    "Near the {place}, {he} found {a_toy}.",
    "Later that day, {he} went back to the {place} again.",
    "Everyone at the {place} was very happy.",
]


def make_story(rng, heldout=False):
    c = Cast(rng)
    f = c.fields()
    if rng.random() < 0.15:
        parts = outing(rng, c)
    else:
        parts = [opening(rng, c)]
        for _ in range(pick(rng, [(0, 2), (1, 6), (2, 2)])):
            parts.append(trait(rng, c))
        parts += pick(rng, PLOTS)(rng, c)
    if heldout:
        parts.insert(len(parts) - 1, rng.choice(STORY_HELDOUT).format(**f))
    if rng.random() < 0.6:
        f["lesson"] = rng.choice(LESSONS_LEARNED)
        parts.append(rng.choice(ENDINGS).format(**f))
    return " ".join(parts)
