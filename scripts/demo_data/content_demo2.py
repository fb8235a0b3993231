"""Hand-written material for prompt ``demo-2`` (reading/biology, 0-3): the source article, question, rubric,
clause banks and whole answers. Original writing for the callbluff demo (MIT, like the project).

Clause tags: ``D`` explains what a specialist is; ``E`` gives the article's detail of what a panda or koala
depends on (bamboo / eucalyptus); ``R`` gives a risk that comes from being a specialist (the one food or
habitat shrinks and the animal cannot switch). A composed answer's score is the number of distinct
elements its clauses earn. Whole answers carry a score given by hand against the same rubric.
"""

from __future__ import annotations

PROMPT_ID = "demo-2"

ARTICLE_TITLE = "Picky Eaters of the Animal World"

ARTICLE = (
    "Some animals will eat almost anything. A raccoon might dine on fruit, insects, fish and scraps from a "
    "garbage can in a single night. Scientists call animals like this generalists. Other animals are "
    "specialists: they depend on one kind of food or one kind of home, and their bodies and habits are built "
    "around it.\n\nThe giant panda is a famous specialist. Bamboo makes up about 99 percent of its diet, and "
    "an adult panda may spend twelve hours a day chewing stalks and leaves. Because bamboo is low in "
    "nutrients, a panda must eat a great deal of it. The koala of eastern Australia is another specialist. "
    "It feeds almost entirely on the leaves of eucalyptus trees, which are tough and poisonous to most other "
    "animals. Koalas save energy by sleeping up to twenty hours a day.\n\nBeing a specialist works well "
    "while the food supply is steady. It becomes a danger when that supply shrinks. Many kinds of bamboo "
    "flower all at once every few decades and then die, leaving the pandas in that area with little to eat. "
    "When eucalyptus forests are cleared for farms or burned in bushfires, koalas cannot simply switch to "
    "another food. A generalist can move on to something else; a specialist often cannot."
)

QUESTION = (
    "Pandas and koalas are both called specialists. Using information from the article, explain what "
    "'specialist' means and describe one risk that a specialist species faces. Support your answer with "
    "details from the article."
)

RUBRIC = """Score 0-3. Three key elements:
(D) Meaning: a specialist depends on one kind of food or one kind of habitat (a narrow diet), unlike a
    generalist that eats many things. May be said of pandas/koalas ("they are specialists because they only
    eat one kind of food").
(E) Article detail: what the specialist depends on - pandas eat (almost) only bamboo / bamboo is about 99
    percent of a panda's diet; koalas eat (almost) only eucalyptus leaves. Also earned when the detail sits
    inside the risk ("if the bamboo dies, pandas have nothing else to eat").
(R) Risk tied to being a specialist: if its one food or habitat shrinks or disappears (bamboo flowers and
    dies off; eucalyptus forests cleared or burned) the animal cannot switch to another food/home and may go
    hungry, starve or decline.
3 points: D, E and R. 2 points: any two. 1 point: any one. 0 points: none.
No credit for: defining a specialist as rare, special, endangered, an expert or a doctor; wrong details
(koalas eat bamboo); vague or unrelated risks ("they could go extinct", hunting, predators, being slow);
true but irrelevant facts (where they live, how long koalas sleep); off-topic answers."""

# D clauses: lower-case start, no final stop.
D_CLAUSES: list[str] = [
    "a specialist is an animal that depends on one kind of food",
    "specialist means the animal only eats one type of food or lives in one kind of place",
    "a specialist is a species that needs one special food or home to survive",
    "being a specialist means having a really narrow diet",
    "specialists are animals that rely on just one main food source",
    "a specialist is the opposite of a generalist, it can only eat one thing instead of lots of things",
    "a specialist species is one that is adapted to eat one particular food",
    "specialist means it is a picky eater that sticks to one kind of food",
    (
        "specialist means the animal relies on a single kind of food or habitat, unlike a generalist like a "
        "raccoon"
    ),
    "a specialist is an animal whose body and habits are built around one food",
    "a specialist only eats one thing while a generalist eats almost anything",
    "specialist means that it needs one certain food and can't really eat other stuff",
    "a specialist is a animal that depends on one food or one type of home",
]

# E clauses, tagged with the animal they are about.
E_CLAUSES: list[tuple[str, str]] = [
    ("pandas eat almost nothing but bamboo", "panda"),
    ("bamboo is about 99 percent of what a panda eats", "panda"),
    ("the giant panda eats bamboo and spends about twelve hours a day chewing it", "panda"),
    ("pandas only eat bamboo", "panda"),
    ("a panda's diet is almost all bamboo", "panda"),
    ("koalas only eat eucalyptus leaves", "koala"),
    ("koalas live on the leaves of eucalyptus trees", "koala"),
    ("koalas eat eucalyptus leaves, which are poisonous to most other animals", "koala"),
    ("the koala feeds almost entirely on eucalyptus", "koala"),
    ("pandas depend on bamboo and koalas depend on eucalyptus", "both"),
]

# Examples that follow a D clause: "..., like <x>" (E).
E_LIKE: list[tuple[str, str]] = [
    ("like pandas with bamboo", "panda"),
    ("like how pandas eat bamboo", "panda"),
    ("for example the panda which eats bamboo", "panda"),
    ("like koalas and eucalyptus leaves", "koala"),
    ("such as the koala, which eats eucalyptus", "koala"),
    ("like the panda only eating bamboo", "panda"),
]

# R clauses (usable after "One risk is that ..."), tags and animal ("any" = no animal named).
R_CLAUSES: list[tuple[str, frozenset[str], str]] = [
    (
        "if their food runs out they can't just switch to another food and they could starve",
        frozenset("R"),
        "any",
    ),
    ("if something happens to their one food source they have nothing else to eat", frozenset("R"), "any"),
    (
        "when their habitat is destroyed they have nowhere else to go and nothing else to eat",
        frozenset("R"),
        "any",
    ),
    (
        "if the supply of their food shrinks they go hungry because they can't change what they eat",
        frozenset("R"),
        "any",
    ),
    ("a specialist could die out if its only food disappears", frozenset("R"), "any"),
    (
        "they can't move on to something else like a generalist can when their food is gone",
        frozenset("R"),
        "any",
    ),
    ("if the bamboo flowers and dies, pandas have nothing else to eat", frozenset("RE"), "panda"),
    (
        "when bushfires burn the eucalyptus forests, koalas cannot switch to a different food",
        frozenset("RE"),
        "koala",
    ),
    (
        "if farmers cut down the eucalyptus trees, the koalas lose their food and starve",
        frozenset("RE"),
        "koala",
    ),
    (
        "every few decades the bamboo flowers all at once and dies, so the pandas in that area go hungry",
        frozenset("RE"),
        "panda",
    ),
    (
        "when the eucalyptus forests are cleared for farms the koalas have no food left",
        frozenset("RE"),
        "koala",
    ),
    (
        "if all the bamboo dies off the pandas could starve because it is the only thing they eat",
        frozenset("RE"),
        "panda",
    ),
]

D_LEADS = ["{D}.", "In the article, {d}.", "According to the article, {d}.", "I think {d}.", "{D}."]
E_LEADS = ["{E}.", "For example, {e}.", "In the article it says {e}.", "The article says {e}.", "{E}."]
R_LEADS = [
    "One risk is that {r}.",
    "The risk is {r}.",
    "This is dangerous because {r}.",
    "A risk they face is that {r}.",
    "{R}.",
    "The problem is {r}.",
]

# No-credit statements, by the slot they would fill.
WRONG_D: list[str] = [
    "a specialist is an animal that is very rare",
    "specialist means the animal is special and there are not many left",
    "a specialist is an animal that is an expert at something",
    "specialist means they are really good at climbing trees",
    "specialist means the animal is endangered",
    "a specialist is someone who studies animals",
    "specialist means the animal is protected by the government",
]
WRONG_E: list[str] = [
    "koalas eat bamboo",
    "pandas eat eucalyptus and fish",
    "pandas sleep twenty hours a day",
    "koalas eat bugs and fruit",
]
WRONG_R: list[str] = [
    "they could go extinct",
    "people hunt them for their fur",
    "they are slow so predators catch them",
    "they could get sick",
    "zoos take them away from the wild",
    "climate change is bad for them",
    "they don't have babies very often",
    "they could get hit by cars",
]
NEUTRAL: list[str] = [
    "pandas live in China",
    "koalas live in Australia",
    "koalas sleep up to twenty hours a day",
    "pandas are black and white",
    "raccoons eat almost anything",
    "I think pandas are really cute",
    "koalas are not actually bears",
    "both of them are mammals",
]

# Whole answers, written one by one, with the score they earn on the rubric.
WHOLE: list[tuple[str, int]] = [
    # 3 points
    (
        (
            "A specialist is an animal that depends on only one kind of food. Pandas eat almost only bamboo. "
            "The risk is that if the bamboo flowers and dies off, the pandas can't switch to another food "
            "and could starve."
        ),
        3,
    ),
    (
        (
            "Specialist means it eats one thing, like koalas only eat eucalyptus leaves. If the eucalyptus "
            "forests burn in a bushfire the koalas have nothing to eat because they can't just switch."
        ),
        3,
    ),
    (
        (
            "specialist is when a animal only eats one kind of food. pandas eat bambo and if the bambo dies "
            "they will starve"
        ),
        3,
    ),
    (
        (
            "In the article a specialist is an animal that relies on one food or one home instead of eating "
            "lots of things like a raccoon. Koalas are specialists because they eat eucalyptus leaves. One "
            "risk is that when the forests are cleared for farms, koalas lose their food and cannot eat "
            "anything else."
        ),
        3,
    ),
    (
        (
            "Being a specialist means having a very narrow diet. Bamboo is about 99% of a panda's diet. If "
            "the bamboo in an area dies after flowering, the pandas there have little to eat."
        ),
        3,
    ),
    (
        (
            "Specialists need one thing to live. for pandas its bamboo. the risk is when that runs out they "
            "cant change to something else so they die"
        ),
        3,
    ),
    (
        (
            "A specialist species depends on a single food source, for example the koala, which feeds almost "
            "entirely on eucalyptus. This is risky because if fire or logging destroys the eucalyptus trees, "
            "the koala has no other food."
        ),
        3,
    ),
    (
        (
            "It means they only eat one type of food. Pandas only eat bamboo so if all the bamboo dies they "
            "will starve. Generalists like raccoons can eat other stuff."
        ),
        3,
    ),
    ("specialist = only eats one food. koala - eucalyptus. if the trees get burned they starve", 3),
    (
        (
            "A specialist is picky about food and only eats one kind. The panda eats bamboo for twelve hours "
            "a day. Every few decades the bamboo flowers and dies, and then the pandas have nothing to eat, "
            "unlike a raccoon that could find something else."
        ),
        3,
    ),
    (
        (
            "The article says specialists depend on one kind of food or home. Koalas eat eucalyptus leaves "
            "that are poisonous to other animals. When people clear the forests for farms the koalas cant "
            "switch food so they are in danger."
        ),
        3,
    ),
    (
        (
            "a specalist depends on one food. pandas need bambo. if it dissapears they have no food and "
            "could die out"
        ),
        3,
    ),
    # 2 points
    ("A specialist only eats one kind of food. Pandas eat bamboo.", 2),
    ("specialist means it depends on one food. the risk is if that food goes away it could starve", 2),
    ("Pandas eat bamboo and if the bamboo dies they have nothing to eat.", 2),
    ("Koalas only eat eucalyptus leaves and when bushfires burn the trees they cant eat anything else", 2),
    (
        (
            "A specialist is an animal that is adapted to one type of food or habitat, like the panda with "
            "bamboo. They are endangered because people hunt them."
        ),
        2,
    ),
    (
        (
            "Specialist means a really picky eater that only eats one thing. If their food runs out they "
            "cant find something else and they starve."
        ),
        2,
    ),
    (
        (
            "A specialist lives in one special habitat and can't live anywhere else. Koalas could lose their "
            "homes when the forests are cut down for farms and then they have nowhere to go."
        ),
        2,
    ),
    (
        (
            "Specialists eat only one food instead of many foods like generalists. Koalas eat eucalyptus. "
            "They sleep twenty hours a day to save energy."
        ),
        2,
    ),
    (
        (
            "If the bamboo dies off, the pandas cannot eat anything else, so they starve. Pandas are black "
            "and white and live in China."
        ),
        2,
    ),
    (
        (
            "It means they eat one thing. They could go hungry if that thing is gone because they don't eat "
            "anything else."
        ),
        2,
    ),
    # 1 point
    ("Pandas only eat bamboo.", 1),
    ("It means they only eat one food.", 1),
    ("If their food goes away they will starve because they can't eat anything else.", 1),
    ("Specialist means they are good at one thing. Koalas eat eucalyptus leaves.", 1),
    ("a specialist is a animal that needs one kind of food to survive. They could go extinct.", 1),
    ("koalas eat eucalyptus and sleep 20 hours a day", 1),
    ("The risk is that their one food could disappear and they would have no backup food.", 1),
    ("Pandas are specialists because they need bamboo. Pandas are really cute and I saw one at the zoo.", 1),
    ("specialist is like picky, only one kind of food", 1),
    ("The panda eats bamboo for twelve hours every day because bamboo does not have many nutrients.", 1),
    # 0 points
    ("A specialist is an animal that is special.", 0),
    ("Specialist means they are rare and endangered.", 0),
    ("pandas are cute", 0),
    ("They could go extinct.", 0),
    ("Koalas eat bamboo and pandas eat leaves.", 0),
    ("A specialist is a doctor who knows a lot about one thing.", 0),
    ("People hunt pandas for their fur so that is a risk.", 0),
    ("I dont know what specialist means.", 0),
    ("pandas live in china and koalas live in australia", 0),
    ("specialist means an animal that is really good at surviving", 0),
    ("The risk is that they are slow and predators can get them.", 0),
    ("Generalists eat anything, like raccoons.", 0),
    ("Because they are specialists.", 0),
    ("koalas sleep a lot because they are lazy", 0),
    ("A specialist is an animal that scientists study a lot. The risk is climate change.", 0),
    ("idk sorry", 0),
    ("Both animals are bears and they live in forests.", 0),
    ("Specialist means the animal is very smart and has special skills like climbing.", 0),
    ("The risk is people. People are cutting down forests everywhere and it is bad for the earth.", 0),
    ("pandas and koalas are specialists", 0),
    ("It means they are in zoos and get special care from the zoo keepers.", 0),
]
