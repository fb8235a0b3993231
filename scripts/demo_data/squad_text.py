"""Six invented encyclopedic paragraphs with five questions each, for a tiny SQuAD-v1.1-format reading set.
Original writing for the callbluff demo (MIT, like the project); places, people and events are fictional.

Each question lists its gold answers as exact substrings of the paragraph; the builder computes
``answer_start`` (the answer's only occurrence, or the occurrence given as ``(text, n)``).
"""

from __future__ import annotations

ARTICLES: list[dict] = [
    {
        "title": "Harrowgate_Point_Lighthouse",
        "context": (
            "Harrowgate Point Lighthouse stands on a granite headland at the northern entrance to Colby "
            "Sound. It was designed by the engineer Margaret Ellery and first lit on 3 October 1871, after a "
            "decade in which eleven ships were wrecked on the rocks below. The tower is 34 metres tall and "
            "is built from blocks of local granite that were hauled up the cliff by a steam winch. Its light "
            "originally came from a large Fresnel lens that floated in a bath of mercury so that it could "
            "turn with very little friction; a keeper had to wind the clockwork mechanism every four hours "
            "through the night. Three keepers and their families lived in the cottages beside the tower "
            "until the light was automated in 1968. Today the cottages house a small museum, and the lens, "
            "still in working order, can be seen in its original lantern room."
        ),
        "qas": [
            (
                "Who designed Harrowgate Point Lighthouse?",
                ["Margaret Ellery", "the engineer Margaret Ellery"],
            ),
            ("When was the lighthouse first lit?", ["3 October 1871"]),
            ("How tall is the tower?", ["34 metres"]),
            (
                "Why did the lens float in a bath of mercury?",
                [
                    "so that it could turn with very little friction",
                    "it could turn with very little friction",
                ],
            ),
            ("How often did a keeper have to wind the clockwork mechanism?", ["every four hours"]),
        ],
    },
    {
        "title": "River_Tallow",
        "context": (
            "The River Tallow rises in the peat bogs of the Kestrel Hills and flows south-east for 212 "
            "kilometres before entering the sea at Marrow Bay. Its largest tributary, the Wend, joins it at "
            "the market town of Ashby Cross, where the combined river becomes wide enough for small barges. "
            "During the nineteenth century more than forty water mills were built along its banks, most of "
            "them grinding grain or fulling wool. The river is known for sudden floods: in March 1913 heavy "
            "rain on frozen ground raised the water level at Ashby Cross by nearly four metres in a single "
            "night. After that flood, the county built the Hollin Weir upstream of the town to hold back "
            "water during storms. The lower Tallow is now a protected habitat for otters and for the rare "
            "spotted river lamprey."
        ),
        "qas": [
            ("Where does the River Tallow rise?", ["the peat bogs of the Kestrel Hills", "Kestrel Hills"]),
            ("How long is the River Tallow?", ["212 kilometres"]),
            ("Which tributary joins the Tallow at Ashby Cross?", ["the Wend", "Wend"]),
            ("What caused the flood of March 1913?", ["heavy rain on frozen ground"]),
            ("Why was the Hollin Weir built?", ["to hold back water during storms"]),
        ],
    },
    {
        "title": "Vesper_cooling_jar",
        "context": (
            "The Vesper cooling jar was a device for keeping food cool without ice, patented in 1886 by "
            "Anselm Vesper, a potter from the river town of Oberhain. It consisted of two unglazed clay "
            "pots, one set inside the other, with the gap between them filled with wet sand. As water "
            "evaporated from the outer pot, it drew heat away from the inner pot, where milk, butter or "
            "vegetables were stored. Vesper claimed that the jar could keep its contents about ten degrees "
            "cooler than the surrounding air on a dry day. The device worked poorly in humid weather, "
            "because water evaporates slowly when the air is already damp. Although mechanical refrigerators "
            "replaced it in most homes by the 1930s, versions of the design are still used in some hot, dry "
            "regions, where they can keep vegetables fresh for up to three weeks."
        ),
        "qas": [
            ("Who patented the Vesper cooling jar?", ["Anselm Vesper"]),
            ("What filled the gap between the two pots?", ["wet sand"]),
            (
                "How much cooler than the surrounding air could the jar keep its contents?",
                ["about ten degrees", "ten degrees"],
            ),
            (
                "Why did the jar work poorly in humid weather?",
                [
                    "because water evaporates slowly when the air is already damp",
                    "water evaporates slowly when the air is already damp",
                ],
            ),
            ("What replaced the jar in most homes by the 1930s?", ["mechanical refrigerators"]),
        ],
    },
    {
        "title": "Copper-crested_warbler",
        "context": (
            "The copper-crested warbler is a small songbird that breeds in the birch forests of northern "
            "Varnland and spends the winter in the river valleys of the south. Adults weigh only nine grams "
            "and are named for the band of reddish-brown feathers on the male's head. The birds make their "
            "journey of roughly 3,000 kilometres mostly at night, resting and feeding during the day. Their "
            "song, a rapid run of clicks that ends in a falling whistle, is often the only sign of them in dense "
            "woodland. They "
            "feed mainly on caterpillars and small beetles, which they pick from the undersides of leaves. "
            "Females build cup-shaped nests from moss and spider silk and usually lay four or five eggs. "
            "Since 1990 the population has fallen by about a third, a decline that researchers link to the "
            "draining of wetlands along the migration route."
        ),
        "qas": [
            (
                "Where does the copper-crested warbler breed?",
                ["the birch forests of northern Varnland", "northern Varnland"],
            ),
            ("How much does an adult copper-crested warbler weigh?", ["nine grams"]),
            (
                "What is the copper-crested warbler named for?",
                ["the band of reddish-brown feathers on the male's head", "reddish-brown feathers"],
            ),
            ("What do females build their nests from?", ["moss and spider silk"]),
            (
                "What do researchers link the population decline to?",
                ["the draining of wetlands along the migration route", "the draining of wetlands"],
            ),
        ],
    },
    {
        "title": "Drummond_Pass_Railway",
        "context": (
            "The Drummond Pass Railway is a narrow-gauge rack railway that climbs from the lakeside village "
            "of Emmerich to the summit station at Drummond Pass, a distance of 14 kilometres. It opened in "
            "July 1902 and was built mainly to carry slate from the quarries near the pass down to the lake "
            "steamers. On its steepest section the line rises one metre for every eight metres travelled, a "
            "gradient that ordinary wheels could not climb, so a toothed rail laid between the running rails "
            "engages a cog wheel beneath each locomotive. Slate traffic ended in 1957 when the last quarry "
            "closed, and the railway nearly shut down as well. A group of volunteers bought the line in 1961 "
            "and reopened it for tourists two years later. Its four original steam locomotives still run on "
            "summer weekends."
        ),
        "qas": [
            ("How long is the Drummond Pass Railway?", ["14 kilometres"]),
            ("What was the railway built mainly to carry?", ["slate"]),
            ("What is laid between the running rails?", ["a toothed rail", "toothed rail"]),
            ("When did slate traffic on the railway end?", ["1957"]),
            ("Who bought the line in 1961?", ["A group of volunteers", "volunteers"]),
        ],
    },
    {
        "title": "Skarra",
        "context": (
            "Skarra is a treeless island of about 19 square kilometres lying 40 kilometres off the west "
            "coast of Norland. Its first scientific survey was carried out in the summer of 1934 by the "
            "botanist Ilse Marrow, who spent eleven weeks camped beside the island's only freshwater lake. "
            "Marrow recorded 187 species of lichen, 31 of which had never been described before. She noticed "
            "that the richest lichen growth was on the western cliffs, which are soaked by sea spray and "
            "rarely freeze. Her notebooks, written in a mixture of German and Latin, are kept at the "
            "university library in Hallstrand. In 1979 the island was declared a nature reserve, and "
            "visitors now need a permit to land between April and August, when seabirds are nesting."
        ),
        "qas": [
            (
                "Who carried out the first scientific survey of Skarra?",
                ["Ilse Marrow", "the botanist Ilse Marrow"],
            ),
            ("How long did Marrow camp on the island?", ["eleven weeks"]),
            ("How many of the lichen species Marrow recorded had never been described before?", ["31"]),
            (
                "Where was the richest lichen growth on Skarra?",
                ["on the western cliffs", "the western cliffs"],
            ),
            ("When do visitors need a permit to land on Skarra?", ["between April and August"]),
        ],
    },
]
