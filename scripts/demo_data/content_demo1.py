"""Hand-written material for prompt ``demo-1`` (science, 0-2): the question, the rubric, clause banks and
whole answers. Original writing for the callbluff demo (MIT, like the project).

Every clause carries the rubric elements it earns (``A``: names conduction; ``B``: explains how the heat
gets along the spoon to the handle). A composed answer's score is the number of distinct elements its
clauses earn, so the score follows the rubric by construction. Whole answers carry a score given by hand
against the same rubric.
"""

from __future__ import annotations

PROMPT_ID = "demo-1"

QUESTION = (
    "A metal spoon is left standing in a cup of hot tea. After a minute, the end of the handle feels hot, "
    "even though it is not touching the tea. Explain how the heat reaches the handle, and name the process."
)

RUBRIC = """Score 0-2. Two key elements:
(A) Names the process: conduction (also accept "conducts heat", "conductor", "thermal/heat conduction",
    and misspellings that clearly mean conduction, e.g. "condution").
(B) Explains how the heat reaches the handle: thermal energy passes from the hot tea into the spoon and is
    passed along/through the metal from the hot end to the cooler handle (heat flows from hot to cold
    through the spoon), or a particle account (particles/atoms at the hot end vibrate faster and pass
    energy to their neighbours; free electrons carry energy along the metal).
2 points: both A and B.
1 point: A only, or B only. Each element earns its point on its own: B still counts when the answer
    names the wrong process, and A still counts next to a wrong explanation.
0 points: neither. No credit for naming another process (convection, radiation, insulation,
    evaporation), for misconceptions (cold leaves the spoon, steam or hot air heats the handle, metal
    attracts/stores/absorbs heat from the air), for saying only that the tea heats the spoon without
    saying how the heat gets to the handle, or for off-topic answers."""

# Element B as clauses: lower-case start, no final stop, usable after "because" or as a sentence.
B_CLAUSES: list[str] = [
    "the heat from the tea moves up through the metal to the handle",
    "heat travels from the hot end of the spoon in the tea along the spoon to the cold end",
    "the thermal energy from the tea passes into the spoon and then along the metal up to the handle",
    (
        "the hot tea heats the bottom of the spoon and that heat spreads up the spoon until it reaches the "
        "handle"
    ),
    "heat always moves from hot to cold, so it flows from the tea up the spoon to the cooler handle",
    "the energy is passed along the spoon from the part in the tea to the part you hold",
    "the part of the spoon in the tea gets hot first and then the heat moves along the metal to the top",
    "the heat is transferred through the solid metal from the tea end to the handle end",
    "the heat energy spreads through the spoon from the hotter part to the cooler part",
    "the heat goes from the tea into the spoon and travels all the way up to your fingers",
    "heat flows through the spoon from the bottom where it is hot to the top where it is cool",
    "the warmth from the tea creeps up the metal bit by bit until the whole spoon is warm",
    "the hot end of the spoon passes its heat along to the handle",
    "thermal energy moves through the metal from where it is hot to where it is cooler",
    "the heat goes from the hot tea to the spoon and then up the spoon",
    "the tea gives heat to the spoon and the heat keeps moving up the spoon to the handle",
    # particle / electron accounts
    (
        "the particles in the bottom of the spoon start vibrating faster and bump into the particles next to "
        "them, passing the energy up to the handle"
    ),
    (
        "the metal particles near the tea get more energy and vibrate more, and they pass that energy on to "
        "their neighbours all the way up the spoon"
    ),
    (
        "the atoms in the hot part shake faster and knock into the atoms beside them so the energy gets "
        "passed along"
    ),
    (
        "metals have free electrons that move around and carry the heat energy quickly along the spoon to "
        "the handle"
    ),
    "the molecules in the spoon vibrate and pass the heat from one to the next up to the handle",
    (
        "the particles at the hot end collide with the cooler particles next to them and transfer energy "
        "along the spoon"
    ),
    (
        "the hot particles pass energy to the cold particles one after another until it gets to the end of "
        "the spoon"
    ),
]

# Element A as clauses (lower-case start, no stop).
A_CLAUSES: list[str] = [
    "this is called conduction",
    "the process is conduction",
    "this process is called thermal conduction",
    "that is conduction",
    "the name of the process is conduction",
    "it's called conduction",
    "this is an example of conduction",
    "this is heat conduction",
    "the process is called conduction",
    "this way of moving heat is conduction",
]

# Element A as statements about conductors (no explanation of the route of the heat).
A_CONDUCTOR: list[str] = [
    "metal is a good conductor of heat",
    "the spoon conducts heat",
    "metals are good conductors of heat",
    "metal conducts heat really well",
    "the spoon is a conductor",
    "metal is a conductor and wood is not",
]

# "Lead" forms that name conduction and then give the explanation (A + the B clause that follows).
A_LEADS: list[str] = [
    "It is conduction because {b}.",
    "Conduction. {B}.",
    "The process is conduction, which means {b}.",
    "The handle gets hot by conduction: {b}.",
    "Conduction, because {b}.",
    "The heat gets to the handle by conduction. {B}.",
    "It's conduction, {b}.",
    "By conduction. {B}.",
]

# Leads for an explanation clause (no element by themselves).
B_LEADS: list[str] = [
    "The handle gets hot because {b}.",
    "It feels hot because {b}.",
    "{B}.",
    "This happens because {b}.",
    "The spoon gets hot since {b}.",
    "When the spoon sits in the tea, {b}.",
    "The handle heats up because {b}.",
    "It is hot because {b}.",
    "The reason is that {b}.",
]

# Naming the wrong process: no credit.
WRONG_PROCESS: list[str] = [
    "this is called convection",
    "the process is radiation",
    "it is convection because heat rises",
    "this is radiation from the tea",
    "the process is called insulation",
    "this is evaporation",
    "the process is a convection current",
    "the process is called radiation",
    "it's convection",
]

# Misconceptions about how the handle gets hot: no credit.
MISCONCEPTIONS: list[str] = [
    "the cold in the spoon goes out into the tea",
    "the steam coming off the tea heats up the handle",
    "the metal absorbs heat from the air around the cup",
    "metal attracts heat like a magnet",
    "the handle is touching the side of the cup and the cup is hot",
    "the heat rises off the tea and warms up the air around the handle",
    "spoons store heat inside them",
    "the sugar in the tea makes the spoon hot",
    "the spoon reflects the heat back up",
    "the hot air from the tea goes up and hits the handle",
    "the coldness leaves the spoon and goes into the tea",
    "the spoon soaks up the heat like a sponge and keeps it",
]

# True or harmless statements that earn nothing on this rubric.
NEUTRAL: list[str] = [
    "the tea is hotter than the spoon",
    "the tea heats up the spoon",
    "metal gets hot fast",
    "that's why you should use a wooden spoon",
    "wood and plastic don't get hot like metal does",
    "you could burn your fingers if you touch it",
    "the spoon was cold at first",
    "the same thing happens with a pan on the stove",
    "the longer you leave it the hotter it gets",
    "a plastic spoon would not get as hot",
    "the tea also cools down a little",
    "it is dangerous to touch it",
]

# Whole answers, written one by one, with the score they earn on the rubric.
WHOLE: list[tuple[str, int]] = [
    # 2 points
    (
        (
            "The spoon gets hot by conduction. The heat energy from the tea passes from particle to particle "
            "up the metal until it reaches the handle."
        ),
        2,
    ),
    (
        (
            "Conduction. the tea is hot so the bottom of the spoon gets hot and then the heat travels up the "
            "spoon to the handle because metal is a conductor"
        ),
        2,
    ),
    ("its conduction, heat moves thru the spoon from the hot tea to the cold handle", 2),
    (
        (
            "The handle gets hot because of conduction. Heat always goes from a hotter place to a colder "
            "place, so the heat from the tea goes into the spoon and moves up along it to where your hand is."
        ),
        2,
    ),
    (
        (
            "When you put a metal spoon in hot tea the particles in the spoon that are in the tea get energy "
            "and start to vibrate. They hit the particles next to them and give them energy, and this keeps "
            "going up to the handle. This is conduction."
        ),
        2,
    ),
    ("by condution, the heat goes up the spoon from the tea", 2),
    (
        (
            "Heat is conducted along the spoon. The end in the tea warms up and passes the heat on to the "
            "rest of the metal."
        ),
        2,
    ),
    (
        (
            "Thermal conduction. Energy from the hot liquid transfers into the metal and flows to the cooler "
            "end of the spoon"
        ),
        2,
    ),
    (
        (
            "The metal spoon is a good conductor, so the heat from the tea travels through it up to the "
            "handle. The process is called conduction."
        ),
        2,
    ),
    ("It feels hot becuase the heat from the tea went up the spoon. That is called conduction", 2),
    (
        (
            "Metal is a conductor. The heat moves from the hot tea up the spoon to the handle, it's called "
            "conduction and that is why the handle is hot even though it is not in the tea."
        ),
        2,
    ),
    ("the electrons in the metal carry the heat up the spoon to the handle. conduction", 2),
    (
        (
            "Conduction is when heat goes through a solid. The tea heats the bottom of the spoon and the "
            "heat goes through the solid metal to the top."
        ),
        2,
    ),
    (
        (
            "The process is conduction because the hot particles of the spoon pass on their heat to the "
            "cooler particles next to them until the heat gets to the handle."
        ),
        2,
    ),
    (
        (
            "heat transfer by conduction - the heat from the tea travels along the spoon to the handle so "
            "your hand feels it"
        ),
        2,
    ),
    ("The heat moves up the spoon by conduction, from the hot part to the cold part.", 2),
    (
        (
            "Because of conduction. The atoms at the bottom of the spoon vibrate faster and bump the atoms "
            "above them, so the heat spreads all the way up"
        ),
        2,
    ),
    (
        (
            "i think it is conducshun. the hot tea makes the spoon hot at the bottom and then the hot goes "
            "up the spoon to the top part."
        ),
        2,
    ),
    (
        (
            "Conduction: the thermal energy is passed along the metal spoon from the end in the tea to the "
            "end of the handle."
        ),
        2,
    ),
    ("The heat from the tea conducts up the spoon to the handle.", 2),
    (
        (
            "Metal spoons conduct heat. The heat from the tea moves up through the spoon and makes the "
            "handle hot, so you should not touch it."
        ),
        2,
    ),
    ("Heat conduction. Heat goes from the tea, into the spoon, up the spoon, into your hand.", 2),
    (
        (
            "The energy travels from the hot tea up the metal by conduction. Metal is a good conductor so it "
            "happens fast. If the spoon was wood it would take way longer."
        ),
        2,
    ),
    ("conduction!! the heat goes up the spoon from the tea end to the handle end", 2),
    (
        (
            "The spoon is touching the hot tea so heat energy moves into it and then the heat is conducted "
            "up the handle particle by particle."
        ),
        2,
    ),
    (
        (
            "Conduction is the process. The particles of the spoon that are in the tea are moving fast and "
            "they pass there energy to the slower particles higher up."
        ),
        2,
    ),
    # 1 point: A only
    ("Conduction", 1),
    ("conduction because metal is a conductor", 1),
    ("It is called conduction.", 1),
    ("the process is condution", 1),
    (
        (
            "The spoon is made of metal and metal is a good conductor of heat, so it gets hot. That's "
            "conduction."
        ),
        1,
    ),
    ("metal conducts heat", 1),
    ("Conduction. Metal gets hot really fast and wood doesn't.", 1),
    ("I think the answer is conduction because my teacher said metals conduct", 1),
    ("The name of the process is conduction. That's why pot handles are made out of plastic.", 1),
    ("conduction i think", 1),
    (
        (
            "The spoon gets hot by conduction. Conduction is one of the three ways heat moves, the others "
            "are convection and radiation."
        ),
        1,
    ),
    ("It's conduction because the spoon is metal and the tea is hot.", 1),
    ("Its conduction. The tea is really hot and the spoon is a conductor so the spoon gets hot too.", 1),
    ("the answer is CONDUCTION", 1),
    ("The spoon conducts the heat of the tea. It would burn you.", 1),
    # 1 point: B only (sometimes with a wrong process name)
    ("The heat from the tea goes into the spoon and then travels up the spoon to the handle.", 1),
    ("heat goes from hot to cold so it goes up the spoon from the tea to the handle", 1),
    (
        (
            "The particles in the spoon pass the heat along to each other up to the top. This process is "
            "called convection."
        ),
        1,
    ),
    ("Radiation. The heat moves up the spoon from the bottom part in the tea to the top.", 1),
    ("the heat travels up the metal to your hand, it is called insulation", 1),
    ("The bottom of the spoon is in the hot tea so it heats up and the heat spreads up to the handle.", 1),
    (
        (
            "Its because the energy from the tea moves through the spoon to the end. The heat keeps moving "
            "till the whole spoon is hot."
        ),
        1,
    ),
    (
        (
            "The hot tea warms the spoon, then the heat travels up the metal. This is how a pan handle gets "
            "hot too."
        ),
        1,
    ),
    ("Convection, the heat flows through the spoon from hot to cold", 1),
    ("The heat climbs up the spoon from the tea because heat moves to colder places.", 1),
    ("the little particles in the metal shake and pass the heat up the spoon, i forgot what its called", 1),
    # 0 points
    ("Because the tea is hot.", 0),
    ("convection", 0),
    ("radiation", 0),
    (
        (
            "The spoon gets hot because the steam from the tea rises up and heats the handle. This is "
            "convection."
        ),
        0,
    ),
    ("idk", 0),
    ("Because the spoon is metal.", 0),
    ("The cold from the spoon goes into the tea so the spoon gets warmer.", 0),
    ("The heat radiates out of the tea and hits the handle. This is radiation.", 0),
    ("I like my tea with milk and two sugars so the spoon gets hot when I stir it", 0),
    ("Evaporation. The tea evaporates and makes the spoon hot.", 0),
    ("It is hot because the spoon was in the dishwasher before.", 0),
    ("the spoon absorbs heat from the air in the room", 0),
    ("Metal attracts heat so the spoon pulls the heat out of the tea and keeps it.", 0),
    ("because hot things make other things hot", 0),
    ("The spoon feels hot because your hand is cold.", 0),
    ("The process is called melting.", 0),
    (
        (
            "heat rises so the heat goes up into the air and then the handle gets hot from the hot air, that "
            "is convection"
        ),
        0,
    ),
    ("The tea is like 80 degrees and spoons are thin.", 0),
    ("Insulation", 0),
    ("It's because of friction from stirring the tea.", 0),
    ("the spoon is hot", 0),
    ("You should never leave a spoon in a cup because it can burn you.", 0),
    ("The handle gets hot because it is touching the hot cup.", 0),
    ("Because heat energy.", 0),
    ("it gets hot because of the sun shining on it", 0),
    ("The spoon is silver and silver is a hot metal.", 0),
    ("Hot tea + metal spoon = hot handle. Its science.", 0),
    ("The heat from the tea makes the spoon hot. I don't know the name of the process.", 0),
    ("Photosynthesis", 0),
    ("The tea boils and the bubbles pop onto the handle.", 0),
]
