"""Hand-written material for the essay prompt ``demo-essay`` (score 1-6): the prompt, the holistic rubric,
sentence banks by stance, reason and quality level, and whole low-scoring essays. Original writing for the
callbluff demo (MIT, like the project).

An essay of level ``hi`` / ``mid`` / ``lo`` is built from that level's sentences only, so the writing
quality of a built essay matches its score: level 6 and 5 essays use ``hi`` paragraphs (6 adds a rebuttal of
the other side), 4 uses ``mid`` with one ``hi`` paragraph at most, 3 uses ``mid``/``lo`` with a few surface
errors, 2 uses ``lo`` sentences in one block with many surface errors and a digression. Score-1 essays are
written whole.

Slots: {principal} {school} {hours} {place} {activity} {person} {name}.
"""

from __future__ import annotations

PROMPT_ID = "demo-essay"

PROMPT = (
    "Some high schools require every student to complete a set number of hours of volunteer work in the "
    "community before graduating. Should students be required to do volunteer work? Write a letter to your "
    "principal in which you take a position on this question. Use reasons and specific examples to support "
    "your position."
)

RUBRIC = """Holistic score 1-6 (organisation, development, conventions).
6: Clear, insightful position; well organised (introduction, body paragraphs, conclusion) with smooth
   transitions; two or more reasons, each developed with specific, relevant examples; answers the other
   side; varied sentences and precise words; virtually free of errors.
5: Clear position; well organised; reasons developed with relevant examples, though less fully or less
   precisely than a 6; good control of sentences and words; few errors.
4: Position clear; adequate organisation with paragraphs and simple transitions; reasons supported with
   some general examples; plain but correct sentences; some errors that do not get in the way.
3: Position stated; some organisation but thin paragraphs; reasons listed with little development or
   repetition; limited vocabulary; noticeable errors in spelling, punctuation and sentences.
2: Position weak or wavering; little organisation (one block); reasons barely explained, digressions and
   repetition; frequent errors (run-ons, spelling, capitals) that sometimes get in the way.
1: Little or no response to the task: off-topic, no clear position, no development; severe errors
   throughout."""

PRINCIPALS = [
    "Principal Alvarez",
    "Dr. Okafor",
    "Ms. Lindqvist",
    "Mr. Brennan",
    "Mrs. Patel",
    "Dr. Huang",
    "Mr. Delgado",
    "Ms. Whitfield",
    "Principal Moreau",
    "Mr. Sato",
]
SCHOOLS = [
    "Maple Ridge High",
    "Eastbrook High School",
    "Cedar Valley High",
    "Northgate High",
    "Lakeview High School",
    "Hollis Creek High",
]
HOURS = ["forty", "thirty", "twenty-five", "fifty", "sixty"]
# (place, activity, kinds): an example template starting with "[people]", "[food]" or "[work]" only takes
# places of that kind ("work": places where a crowd of helpers gets through a backlog of work).
PLACES: list[tuple[str, str, frozenset[str]]] = [
    (
        "the food bank on Pine Street",
        "sorting cans and packing boxes for families",
        frozenset({"people", "food", "work"}),
    ),
    ("the animal shelter", "walking dogs and cleaning out cages", frozenset({"work"})),
    ("the public library", "reading picture books to little kids", frozenset({"people"})),
    ("the Sunnyvale Senior Center", "playing cards and talking with the residents", frozenset({"people"})),
    ("the community garden", "pulling weeds and planting tomatoes", frozenset({"work"})),
    ("the river cleanup", "pulling bottles and plastic bags out of the water", frozenset({"work"})),
    (
        "an after-school tutoring program",
        "helping fourth graders with their math homework",
        frozenset({"people"}),
    ),
    ("the soup kitchen downtown", "serving lunch and washing dishes", frozenset({"people", "food", "work"})),
    ("the youth soccer league", "coaching a team of six-year-olds", frozenset({"people"})),
    ("the thrift store run by the hospital", "sorting donated clothes", frozenset({"people", "work"})),
]
PERSONS = [
    "my cousin",
    "my older sister",
    "my friend Marcus",
    "my neighbor",
    "a girl in my homeroom",
    "my brother",
    "my best friend",
    "a boy on my bus",
]
# Persons that read well with a possessive ("{person}'s school").
PERSONS_POSSESSIVE = [
    "my cousin",
    "my older sister",
    "my friend Marcus",
    "my neighbor",
    "my brother",
    "my best friend",
]
NAMES = [
    "Jordan",
    "Priya",
    "Sam",
    "Elena",
    "Marcus",
    "Tyler",
    "Amara",
    "Lucas",
    "Grace",
    "Dev",
    "Hannah",
    "Omar",
    "Chloe",
    "Mateo",
    "Rosa",
    "Ben",
]

GREETINGS = {
    "hi": ["Dear {principal},"],
    "mid": ["Dear {principal},", "Dear {principal}"],
    "lo": ["Dear {principal}", "dear principal", "To {principal}", "Dear Principal"],
}
SIGNOFFS = {
    "hi": ["Sincerely, {name}", "Respectfully, {name}", "Sincerely,\n{name}"],
    "mid": ["Sincerely, {name}", "From, {name}", "Thank you, {name}"],
    "lo": ["from {name}", "{name}", "thank you"],
}

# ---------------------------------------------------------------------------------------------- intros
INTROS: dict[str, dict[str, list[str]]] = {
    "for": {
        "hi": [
            (
                "I am writing because I heard that {school} is considering a rule that every student must "
                "complete {hours} hours of volunteer work before graduation. I strongly support this "
                "requirement. I believe it would benefit both the students who serve and the community they "
                "serve, and I would like to explain why."
            ),
            (
                "Every year, students at {school} spend thousands of hours in classrooms, yet many of us "
                "have never spent a single afternoon helping someone outside our own families. I believe "
                "that should change. Requiring volunteer work before graduation would be one of the best "
                "decisions our school could make."
            ),
            (
                'Some of my classmates groan when they hear the words "required volunteer hours," but I '
                "think the idea deserves a fair hearing. In my opinion, students should be required to do "
                "volunteer work, because the benefits far outweigh the inconvenience."
            ),
            (
                "A high school diploma is supposed to show that a student is ready for the adult world. I "
                "would argue that knowing how to contribute to a community is part of being ready, which is "
                "why I support a volunteer requirement at {school}."
            ),
        ],
        "mid": [
            (
                "I think students should have to do volunteer work. It is good for the students and it is "
                "good for the community too."
            ),
            (
                "I am writing to tell you that I agree with making volunteer work a requirement at {school}. "
                "There are many reasons why this is a good idea."
            ),
            (
                "In my opinion students should be required to do volunteer hours. I know some people don't "
                "like the idea, but I think it would help a lot of people."
            ),
            (
                "I heard that you might make every student do {hours} hours of community service. I think "
                "this is a good idea and I want to tell you why."
            ),
            (
                "My name is {name} and I am a student at {school}. I am writing to say that I think "
                "volunteer work should be required."
            ),
        ],
        "lo": [
            "I think volunteer work is good and students should do it.",
            "Yes students should do volunteer work because it helps people.",
            "I think we should have to do volunteer work. It is a good idea.",
            "I am writing about the volunteer work. I say yes.",
        ],
    },
    "against": {
        "hi": [
            (
                "I am writing in response to the proposal that every student at {school} complete {hours} "
                "hours of volunteer work before graduating. Although I admire the goal behind the idea, I "
                "believe that requiring volunteer work would do more harm than good."
            ),
            (
                "Volunteering is one of the most generous things a person can do, and that is exactly why I "
                "believe it should not be required. A gift that is demanded stops being a gift. I "
                "respectfully ask you not to make community service a graduation requirement at {school}."
            ),
            (
                "Many adults assume that teenagers need to be pushed into helping others. I understand why "
                "the school is considering a volunteer requirement, but I believe it would be unfair to many "
                "students and would not teach the lesson it is meant to teach."
            ),
            (
                "The proposal to require {hours} hours of community service sounds generous on paper, but I "
                "do not think it would work the way its supporters hope. Students should be encouraged to "
                "volunteer, not forced to."
            ),
        ],
        "mid": [
            (
                "I do not think students should be required to do volunteer work. I have a few reasons why I "
                "feel this way."
            ),
            (
                "I am writing to tell you that I disagree with making volunteer hours a requirement. I think "
                "it is a bad idea for a lot of students."
            ),
            "In my opinion volunteer work should be a choice and not a requirement. Here are my reasons.",
            (
                "I heard that {school} might make everyone do {hours} hours of community service to "
                "graduate. I don't think that is fair and I want to explain why."
            ),
            (
                "My name is {name} and I am a student at {school}. I am writing because I do not think "
                "volunteer work should be required."
            ),
        ],
        "lo": [
            "I dont think students should have to do volunteer work.",
            "No, students should not have to volunteer because they are busy.",
            "I think volunteer work is bad to make people do it.",
            "I am writing about the volunteer hours. I say no.",
        ],
    },
}

# ---------------------------------------------------------------------------------------------- reasons
# Each reason: per level, "topic" (one is chosen), "support" (some chosen, in any order), "example" (at most
# one chosen), "wrap" (optional closing sentence). Sentences of a level never refer to each other, so any
# selection in this order reads as a paragraph.
REASONS: dict[str, dict[str, dict[str, dict[str, list[str]]]]] = {
    "for": {
        "responsibility": {
            "hi": {
                "topic": [
                    "A volunteer requirement teaches responsibility in a way that classroom lessons cannot.",
                    (
                        "One of the clearest benefits of required service is the sense of responsibility it "
                        "builds."
                    ),
                ],
                "support": [
                    "Volunteers quickly learn that a schedule is a promise, not a suggestion.",
                    (
                        "Many students have never been responsible for anything beyond their own grades, and "
                        "service changes that."
                    ),
                    (
                        "When a student signs up for a shift, other people are counting on that student to "
                        "show up on time and do the job well."
                    ),
                    "Unlike a homework assignment, a missed shift has real consequences for real people.",
                    (
                        "Learning to keep a commitment to strangers is a habit that carries over into jobs, "
                        "college and family life."
                    ),
                ],
                "example": [
                    (
                        "Last spring {person} started volunteering at {place}, {activity}, and the "
                        "coordinator soon trusted this new volunteer to open up on Saturday mornings."
                    ),
                    (
                        "When I spent a summer at {place}, {activity}, I learned that if I slept in, someone "
                        "else had to do twice the work."
                    ),
                ],
                "wrap": [
                    "Responsibility like this is hard to teach, but it is easy to learn by doing.",
                    "That kind of maturity is exactly what a diploma should stand for.",
                ],
            },
            "mid": {
                "topic": [
                    "One reason is that volunteering teaches responsibility.",
                    "Doing volunteer work makes students more responsible.",
                ],
                "support": [
                    "Nobody is there to remind you, so you have to keep track of your own hours.",
                    "You learn to keep your promises even when you would rather stay home.",
                    "Being trusted with a real job makes you feel more grown up.",
                    "You have to show up when you said you would because people are depending on you.",
                    "It is like having a job, so students learn how to act in the real world.",
                    "If you do not do your part, the people you are helping are the ones who lose out.",
                ],
                "example": [
                    (
                        "For example, {person} volunteers at {place} and now is much more responsible at "
                        "home too."
                    ),
                    "When I helped at {place}, I had to be there every Saturday at nine.",
                ],
                "wrap": ["This is why volunteering is good for teenagers."],
            },
            "lo": {
                "topic": [
                    "It teaches you responsibility.",
                    "Volunteering makes you more responsible.",
                ],
                "support": [
                    "You have to show up and do stuff for people.",
                    "Kids now dont have enough responsibility.",
                    "My mom says it makes you grow up.",
                ],
                "example": ["{person} does it at {place} and it is good."],
                "wrap": [],
            },
        },
        "community": {
            "hi": {
                "topic": [
                    "Required service would give real help to people in our community who need it.",
                    (
                        "Beyond what it does for students, a volunteer requirement would make a visible "
                        "difference in our town."
                    ),
                ],
                "support": [
                    (
                        "Local charities have lost many of their older volunteers in recent years, and young "
                        "people could fill that gap."
                    ),
                    (
                        "Even simple tasks, like stocking shelves or reading aloud, free up trained staff to "
                        "do the work only they can do."
                    ),
                    (
                        "Food banks, shelters and libraries in our area depend on volunteers, and most of "
                        "them say they never have enough."
                    ),
                    (
                        "If every student gave {hours} hours, our school alone would contribute thousands of "
                        "hours of work every year."
                    ),
                    (
                        "Many of the people who benefit, such as elderly neighbors or children who need "
                        "tutoring, have no one else to turn to."
                    ),
                ],
                "example": [
                    (
                        "[work]When a group of students spent one weekend at {place}, {activity}, the staff "
                        "said they got through a month's worth of work."
                    ),
                    (
                        "[people]The coordinator at {place} told me that a few extra hands on a weekend "
                        "means dozens more families get help."
                    ),
                ],
                "wrap": [
                    "A requirement turns good intentions into actual help.",
                    "Our school could become known as a place that gives back.",
                ],
            },
            "mid": {
                "topic": [
                    "Another reason is that volunteering helps the community.",
                    "Also, volunteer work helps a lot of people who need it.",
                    "Volunteer work helps a lot of people in our town who need it.",
                ],
                "support": [
                    "Our town has given a lot to our school, so it is fair for us to give something back.",
                    "Even small jobs like picking up trash make the town look nicer for everyone.",
                    "A few hours from each student would add up to a lot of help.",
                    "There are many places in our town that need more volunteers.",
                    "If every student helped, it would make a big difference.",
                    "Some people really need the help, like old people and little kids.",
                ],
                "example": [
                    "For example, {place} always needs people for {activity}.",
                    "My church sends people to {place} and they say there are never enough helpers.",
                ],
                "wrap": ["Helping the community makes everyone's life better."],
            },
            "lo": {
                "topic": [
                    "It helps the community alot.",
                    "Also it helps people who need help.",
                ],
                "support": [
                    "Some people are poor and need help.",
                    "There is alot of trash in the parks and we could clean it.",
                    "Helping people is nice.",
                ],
                "example": ["Like at {place} they need people."],
                "wrap": [],
            },
        },
        "future": {
            "hi": {
                "topic": [
                    (
                        "Volunteering also prepares students for their futures, whether they plan to go to "
                        "college or straight into a career."
                    ),
                    (
                        "In addition, service hours give students skills and experiences that employers and "
                        "colleges value."
                    ),
                    "Service hours prepare students for life after graduation in ways that classes cannot.",
                ],
                "support": [
                    (
                        "Employers consistently say they want young workers who can show up, follow "
                        "directions and treat customers with respect."
                    ),
                    (
                        "A student who has already worked alongside adults arrives at a first job with "
                        "confidence instead of fear."
                    ),
                    (
                        "College applications often ask what a student has done outside the classroom, and "
                        "service gives a meaningful answer."
                    ),
                    (
                        "Volunteering lets students try out a field, such as medicine, teaching or "
                        "conservation, before committing years of study to it."
                    ),
                    (
                        "Skills like talking to strangers, solving problems on the spot and working on a "
                        "team are hard to practice in a classroom."
                    ),
                ],
                "example": [
                    (
                        "After a semester at {place}, {activity}, {person} decided to study for a career in "
                        "that field."
                    ),
                    (
                        "My own hours at {place} gave me a reference letter that helped me get my first paid "
                        "job."
                    ),
                ],
                "wrap": [
                    "In this way, a requirement opens doors that students might not know exist.",
                    "These are advantages every graduate deserves.",
                ],
            },
            "mid": {
                "topic": [
                    "Volunteer work also helps students get ready for the future.",
                    "Another good thing is that it looks good on college applications and resumes.",
                    "Volunteering can help students get ready for college and jobs.",
                ],
                "support": [
                    "It is also something to talk about in a job interview.",
                    "You can get a reference from the people you volunteer for.",
                    "Some students might find out what they want to study in college.",
                    "Colleges like to see that you did something besides school.",
                    "You can find out what kind of job you might like.",
                    "You learn skills like working with other people and talking to adults.",
                ],
                "example": [
                    "For example, {person} volunteered at {place} and now wants to work there someday.",
                    "If you want to be a vet, you could volunteer at the animal shelter first.",
                ],
                "wrap": ["So volunteering can help you later in life."],
            },
            "lo": {
                "topic": [
                    "It also looks good for college.",
                    "You can get a job after from it.",
                ],
                "support": [
                    "Colleges want that.",
                    "You learn stuff for jobs.",
                    "My sister put it on her resume.",
                ],
                "example": [],
                "wrap": [],
            },
        },
        "push": {
            "hi": {
                "topic": [
                    (
                        "Some people argue that volunteering should be voluntary, but many students simply "
                        "never start unless something gets them through the door."
                    ),
                    (
                        "A requirement is often the push that students need to discover that they enjoy "
                        "serving others."
                    ),
                ],
                "support": [
                    (
                        "Requirements are how schools introduce students to experiences they would never "
                        "have chosen on their own, from algebra to the school play."
                    ),
                    (
                        "The hardest part of volunteering is the first visit, and a requirement takes care "
                        "of exactly that step."
                    ),
                    (
                        "Most teenagers are not selfish; they are busy and a little nervous about walking "
                        "into an unfamiliar place."
                    ),
                    (
                        "Once the first few hours are done, many students keep going long after the "
                        "requirement is met."
                    ),
                    (
                        "Schools already require things that are good for us, such as physical education, "
                        "because good habits have to start somewhere."
                    ),
                ],
                "example": [
                    (
                        "{person} complained about the idea at first, but after a few weeks at {place}, "
                        "{activity}, ended up signing up for extra shifts."
                    ),
                    (
                        "At a school near us that already has the rule, more than half of the seniors kept "
                        "volunteering after they finished their hours."
                    ),
                ],
                "wrap": [
                    "The requirement is only the beginning of something students choose to continue.",
                ],
            },
            "mid": {
                "topic": [
                    "A lot of students would never volunteer if they were not required to.",
                    "Also, making it a rule gets students to try it.",
                ],
                "support": [
                    "A lot of kids are just shy about signing up by themselves.",
                    "If everyone has to do it, it is easier to go with your friends.",
                    "Some students do not even know where they could volunteer until the school shows them.",
                    "Most kids do not think about volunteering until someone makes them.",
                    "Once they try it, a lot of them end up liking it.",
                    "School makes us do other things that are good for us, like gym class.",
                ],
                "example": [
                    "{person} did not want to go to {place} at first but now goes every week.",
                ],
                "wrap": ["Sometimes people need a push."],
            },
            "lo": {
                "topic": [
                    "Kids wont do it if they dont have to.",
                    "If you dont make them nobody will do it.",
                ],
                "support": [
                    "Everyone just plays video games.",
                    "Then they will like it after.",
                    "Some kids are lazy.",
                ],
                "example": [],
                "wrap": [],
            },
        },
        "empathy": {
            "hi": {
                "topic": [
                    (
                        "Service puts students in contact with people whose lives are very different from "
                        "their own."
                    ),
                    "Volunteering also builds empathy, which may be its deepest benefit of all.",
                ],
                "support": [
                    "Volunteering replaces stereotypes with faces and names.",
                    (
                        "Students who have served meals to families in need are far less likely to make "
                        "cruel jokes about poverty."
                    ),
                    (
                        "It is easy to judge people we have never met, but much harder once we have shared a "
                        "meal or a conversation with them."
                    ),
                    (
                        "Many students at {school} have never spoken with someone who is homeless, elderly "
                        "and alone, or learning English as an adult."
                    ),
                    (
                        "Understanding other people's struggles makes us kinder classmates, neighbors and, "
                        "someday, voters."
                    ),
                ],
                "example": [
                    (
                        "[food]While {activity} at {place}, {person} met a retired nurse who had lost her "
                        "home after an illness, and that conversation changed the way they think about "
                        "poverty."
                    ),
                    (
                        "[people]The people I met at {place} taught me more about our town in an afternoon "
                        "of conversation than a week of textbook chapters."
                    ),
                ],
                "wrap": [
                    "No test can measure that kind of growth, but our community would feel it.",
                ],
            },
            "mid": {
                "topic": [
                    "Volunteering also helps students understand other people.",
                    "Another reason is that you meet people who are different from you.",
                    "Volunteering helps students understand people who are different from them.",
                ],
                "support": [
                    "It is easier to care about people once you actually meet them.",
                    "You stop complaining so much about little things.",
                    "Some of the people you help have had really hard lives.",
                    "You learn that not everyone has it as easy as you.",
                    "It makes you more thankful for what you have.",
                    "You get to hear other people's stories.",
                ],
                "example": [
                    (
                        "[food]When I went to {place}, I met people who did not have enough food for their "
                        "families."
                    ),
                ],
                "wrap": ["This makes students kinder people."],
            },
            "lo": {
                "topic": [
                    "You meet new people.",
                    "You learn other people have it hard.",
                ],
                "support": [
                    "Some people dont have food.",
                    "You feel good after.",
                    "It makes you nice.",
                ],
                "example": [],
                "wrap": [],
            },
        },
    },
    "against": {
        "forced": {
            "hi": {
                "topic": [
                    (
                        "Required volunteering is a contradiction: service that is forced is no longer "
                        "volunteering."
                    ),
                    "My main concern is that a requirement would change the meaning of service itself.",
                ],
                "support": [
                    (
                        "Organizations that rely on volunteers often say that enthusiasm matters more than "
                        "the number of hands."
                    ),
                    (
                        "Students already know the difference between what they choose and what they are "
                        "assigned, and they treat the two very differently."
                    ),
                    (
                        "The value of volunteering comes from choosing to give time that could have been "
                        "spent elsewhere."
                    ),
                    (
                        "When students are ordered to serve, many will treat it as one more chore to finish "
                        "as quickly as possible."
                    ),
                    (
                        "A rule could even teach students to resent the very causes the school hopes they "
                        "will care about."
                    ),
                ],
                "example": [
                    (
                        "At {person}'s old school, which had a similar rule, students joked about finding "
                        'the "easiest hours" and spent their afternoons at {place} watching the clock.'
                    ),
                    (
                        "I have volunteered at {place} by choice for two years, and the students who were "
                        "sent there for hours were the ones checking their phones in the back room."
                    ),
                ],
                "wrap": [
                    (
                        "The school would gain hours on a spreadsheet but lose the spirit that makes service "
                        "meaningful."
                    ),
                ],
            },
            "mid": {
                "topic": [
                    "If you are forced to volunteer, it is not really volunteering.",
                    "One reason is that people should volunteer because they want to.",
                ],
                "support": [
                    "It turns something nice into just another assignment.",
                    "Kids will just try to get the hours over with as fast as they can.",
                    "Volunteering means more when nobody is making you do it.",
                    "Volunteering is supposed to be something you choose to do.",
                    "Students who are forced will not care about the work.",
                    "It might make students hate volunteering instead of liking it.",
                ],
                "example": [
                    "{person} had to do hours at {place} and just sat around waiting to go home.",
                ],
                "wrap": ["That is not what volunteering is about."],
            },
            "lo": {
                "topic": [
                    "If you have to do it then its not volunteer.",
                    "Volunteer means you want to.",
                ],
                "support": [
                    "Nobody will want to do it.",
                    "Its like a punishment.",
                    "Kids will just hate it.",
                ],
                "example": [],
                "wrap": [],
            },
        },
        "busy": {
            "hi": {
                "topic": [
                    "Many students already have schedules that leave little room for anything else.",
                    "A volunteer requirement also ignores how much students are already carrying.",
                ],
                "support": [
                    (
                        "Teenagers are already reporting record levels of stress, and sleep is usually the "
                        "first thing they give up."
                    ),
                    (
                        "Students who play a sport may spend fifteen or twenty hours a week at practices and "
                        "games during the season."
                    ),
                    (
                        "Between advanced classes, homework, practices and part-time jobs, a typical "
                        "junior's week is already full."
                    ),
                    (
                        "Some students work evenings to help pay their family's bills, and others care for "
                        "younger siblings after school."
                    ),
                    (
                        "Adding {hours} hours of required service would force these students to give up "
                        "sleep, study time or paid work."
                    ),
                ],
                "example": [
                    (
                        "{person} works twenty hours a week at a grocery store and still keeps a B average; "
                        "a service requirement would mean choosing between a paycheck and a diploma."
                    ),
                    (
                        "My own week includes swim practice six days a week and a weekend job, and I barely "
                        "have time to finish my homework."
                    ),
                ],
                "wrap": [
                    (
                        "Students in these situations are already serving their families and should not be "
                        "penalized for it."
                    ),
                ],
            },
            "mid": {
                "topic": [
                    "Another reason is that students are already too busy.",
                    "Also, a lot of students do not have the time.",
                    "Students today are already too busy.",
                ],
                "support": [
                    "Most of us do not get home until after dark during sports season.",
                    "Homework already takes up most of our nights.",
                    "Some students work on weekends so they can save money for college.",
                    "We have homework, sports, and some of us have jobs.",
                    "Some students have to take care of their little brothers and sisters after school.",
                    "Adding more hours would make students stressed out.",
                ],
                "example": [
                    "For example, {person} works after school every day to help the family pay rent.",
                ],
                "wrap": ["Students need time to rest too."],
            },
            "lo": {
                "topic": [
                    "We are to busy.",
                    "Students have alot of homework already.",
                ],
                "support": [
                    "I have practice everyday.",
                    "Some people have jobs.",
                    "We need time to sleep.",
                ],
                "example": [],
                "wrap": [],
            },
        },
        "unfair": {
            "hi": {
                "topic": [
                    "A requirement would also be unfair to students who lack the resources to meet it.",
                    "A service requirement would not fall equally on every student.",
                ],
                "support": [
                    (
                        "Students in rural parts of the district may live miles from the nearest "
                        "organization that accepts volunteers."
                    ),
                    (
                        "A requirement that is easy for some and nearly impossible for others is not a fair "
                        "measure of anything."
                    ),
                    (
                        "Getting to a volunteer site often requires a car, a bus pass or a parent with a "
                        "free afternoon."
                    ),
                    (
                        "Students from families with more money and time would finish their hours easily, "
                        "while others would struggle."
                    ),
                    (
                        "Many organizations also require background checks, training sessions or uniforms "
                        "that cost money."
                    ),
                ],
                "example": [
                    (
                        "{person} lives twenty minutes from the nearest bus stop, so a weekly shift at "
                        "{place} would mean a long walk each way."
                    ),
                    (
                        "When our club tried to arrange a trip to {place}, half the members could not get a "
                        "ride."
                    ),
                ],
                "wrap": [
                    "A graduation requirement should not depend on who has a ride.",
                ],
            },
            "mid": {
                "topic": [
                    "Another reason is that it is not fair to everyone.",
                    "Some students would have a harder time getting their hours.",
                ],
                "support": [
                    "Students who live in town can walk to a lot of places, but students on farms cannot.",
                    "Some parents work two jobs and cannot drive their kids anywhere.",
                    "It is not fair to hold back someone's diploma because they did not have a ride.",
                    "Not everyone has a car or a parent who can drive them.",
                    "Some places want you to pay for a shirt or training.",
                    "Students who live far away from town would have trouble getting there.",
                ],
                "example": [
                    "For example, {person} does not have a ride to {place} on weekends.",
                ],
                "wrap": ["This would not be fair."],
            },
            "lo": {
                "topic": [
                    "Also not everyone has a car.",
                    "It is not fair.",
                ],
                "support": [
                    "My mom works on weekends.",
                    "How would they get there.",
                    "The bus doesnt go there.",
                ],
                "example": [],
                "wrap": [],
            },
        },
        "quality": {
            "hi": {
                "topic": [
                    (
                        "Forced volunteers can also be a burden on the very organizations they are supposed "
                        "to help."
                    ),
                    "It is worth asking what the organizations themselves would gain from reluctant helpers.",
                ],
                "support": [
                    (
                        "A volunteer who leaves halfway through a shift can do more harm than having no "
                        "volunteer at all."
                    ),
                    (
                        "Some organizations already turn away school groups because supervising them takes "
                        "too much of their time."
                    ),
                    "Staff members have to spend time training and supervising each new volunteer.",
                    "A student who only wants a signature on a form is unlikely to work carefully.",
                    (
                        "Places that serve children, the elderly or the sick need people they can trust, not "
                        "people counting down the minutes."
                    ),
                ],
                "example": [
                    (
                        "The manager at {place} told our class that she would rather have five committed "
                        "volunteers than twenty students who are only there for hours."
                    ),
                    (
                        "When {person} helped at {place}, {activity}, a group of required volunteers left "
                        "early and the regular helpers had to redo their work."
                    ),
                ],
                "wrap": [
                    (
                        "Good intentions on paper could become extra work for people who are already "
                        "stretched thin."
                    ),
                ],
            },
            "mid": {
                "topic": [
                    "Also, places that need volunteers want people who actually care.",
                    "Another problem is that forced volunteers might not do a good job.",
                    "Places that need volunteers want people who actually care.",
                ],
                "support": [
                    "Some places might even stop taking student volunteers.",
                    "A few bad volunteers could make the whole school look bad.",
                    "The people being helped can tell when someone does not want to be there.",
                    "If students do not want to be there, they will not work hard.",
                    "The workers have to spend time teaching them what to do.",
                    "It could make more work for the people who run the place.",
                ],
                "example": [
                    "When our class went to {place}, some kids just goofed around the whole time.",
                ],
                "wrap": ["That does not help anyone."],
            },
            "lo": {
                "topic": [
                    "Kids will not do a good job.",
                    "They will just mess around.",
                ],
                "support": [
                    "Then the place gets mad.",
                    "They wont try.",
                    "It is a waste of time.",
                ],
                "example": [],
                "wrap": [],
            },
        },
        "alternative": {
            "hi": {
                "topic": [
                    (
                        "Instead of a requirement, the school could encourage service in ways that respect "
                        "students' choices."
                    ),
                    "There are better ways to reach the goal of a more generous student body.",
                ],
                "support": [
                    (
                        "Partnerships with local charities could give students a simple way to sign up for a "
                        "single Saturday without committing to a whole semester."
                    ),
                    (
                        "Sharing stories from students who loved volunteering, in assemblies or the school "
                        "newspaper, would persuade more classmates than any rule."
                    ),
                    (
                        "The school could offer elective credit, recognition at graduation or a service "
                        "award for students who choose to volunteer."
                    ),
                    (
                        "A volunteer fair in the fall would let local organizations meet students and "
                        "explain what they need."
                    ),
                    (
                        "Clubs could organize group events, which make volunteering less intimidating for "
                        "first-timers."
                    ),
                ],
                "example": [
                    (
                        "When {school} held a voluntary cleanup day last April, more than two hundred "
                        "students showed up without being told they had to."
                    ),
                    (
                        "{person}'s school offers a silver cord at graduation for service, and the number of "
                        "volunteers there has grown every year."
                    ),
                ],
                "wrap": [
                    "Encouragement builds habits that last; requirements build resentment that lasts.",
                ],
            },
            "mid": {
                "topic": [
                    "Instead, the school should reward students who choose to volunteer.",
                    "I think there are better ways to get students to volunteer.",
                ],
                "support": [
                    "The school could put up a list of places that need help so students know where to go.",
                    "Students who volunteer could get their name in the yearbook.",
                    "Teachers could tell us about volunteer events in class.",
                    "The school could give extra credit or a certificate.",
                    "You could have a volunteer club that goes together.",
                    "If it is fun, more people will want to do it.",
                ],
                "example": [
                    "For example, our cleanup day last spring had a lot of students who came on their own.",
                ],
                "wrap": ["This way it is still a choice."],
            },
            "lo": {
                "topic": [
                    "They should give prizes instead.",
                    "Make it extra credit.",
                ],
                "support": [
                    "Then people would want to.",
                    "Like pizza or something.",
                    "That would be better.",
                ],
                "example": [],
                "wrap": [],
            },
        },
    },
}

# ------------------------------------------------------------------------------------------- the other side
COUNTERS: dict[str, dict[str, list[str]]] = {
    "for": {
        "hi": [
            (
                "Some students argue that they are too busy with sports, jobs and homework to fit in "
                "volunteer hours. I understand this concern, but {hours} hours spread over four years works "
                "out to well under an hour a month. The school could also count summer service and weekend "
                "events, so no one would have to give up something important."
            ),
            (
                "Critics say that forced service is not really volunteering. That may be true on the first "
                "day, but the requirement only decides that students will serve, not where or how. Students "
                "would still choose the cause that matters to them, and that choice is where real commitment "
                "begins."
            ),
        ],
        "mid": [
            "Some people say students are too busy, but {hours} hours is not that much if you spread it out.",
            (
                "Some people say it is not fair to force students, but school makes us do lots of things "
                "that are good for us."
            ),
        ],
    },
    "against": {
        "hi": [
            (
                "I understand that volunteering can be a valuable experience, and I admire the students who "
                "already give their time. However, a good experience does not become better by being forced. "
                "If the school truly wants more students to serve, it should make volunteering easier and "
                "more rewarding rather than making it one more box to check."
            ),
            (
                "Supporters of the requirement say that students will discover a love of service once they "
                "try it. Some will, but that discovery can happen just as easily through an invitation as "
                "through an order, and without punishing the students who cannot take part."
            ),
        ],
        "mid": [
            (
                "Some people say volunteering builds character, and that is true, but it only works if you "
                "want to be there."
            ),
            "I know volunteering helps people, but it should still be a choice.",
        ],
    },
}

# ---------------------------------------------------------------------------------------------- conclusions
CONCLUSIONS: dict[str, dict[str, list[str]]] = {
    "for": {
        "hi": [
            (
                "In conclusion, a volunteer requirement would help students grow while giving our community "
                "help it badly needs. I hope you will make service a part of every {school} diploma."
            ),
            (
                "For all of these reasons, I urge you to adopt the volunteer requirement. A few hours a year "
                "is a small price for the responsibility, skills and compassion that students would gain."
            ),
            (
                "Our school teaches us how to think; a volunteer requirement would teach us how to act. "
                "Please give every student that chance."
            ),
        ],
        "mid": [
            (
                "In conclusion, I think students should be required to do volunteer work. It helps them and "
                "it helps other people."
            ),
            "That is why I think volunteer hours should be required. Thank you for reading my letter.",
            "So I hope you make volunteer work a requirement at {school}. I think it would be a great idea.",
            (
                "To sum it up, volunteer hours would be good for students and for our town. Please think "
                "about it."
            ),
            "Those are my reasons for saying yes to volunteer hours. I hope you agree with me.",
        ],
        "lo": [
            "So that is why we should do volunteer work.",
            "In conclusion volunteer work is good.",
            "Thats why I say yes.",
        ],
    },
    "against": {
        "hi": [
            (
                "In conclusion, requiring service would be unfair to many students and would weaken the very "
                "spirit of volunteering. I ask you to encourage service at {school} rather than require it."
            ),
            (
                "For these reasons, I respectfully urge you to keep volunteering voluntary. Students who "
                "choose to serve will serve well, and that is worth more than any number of required hours."
            ),
            (
                "A diploma should reflect what students have learned, not how many hours they were made to "
                "give away. Please let service remain a choice."
            ),
        ],
        "mid": [
            (
                "In conclusion, I do not think volunteer work should be required. It should be the student's "
                "choice."
            ),
            "That is why I think you should not make volunteer hours a requirement. Thank you for listening.",
            "So please do not make us do volunteer hours to graduate. Let students decide for themselves.",
            (
                "To sum it up, volunteering is great, but it should not be forced on anyone. Please keep it "
                "a choice."
            ),
            "Those are my reasons for saying no to required hours. I hope you will listen to the students.",
        ],
        "lo": [
            "So thats why we should not have to do it.",
            "In conclusion it should not be required.",
            "Thats why I say no.",
        ],
    },
}

# Sentences a weak writer adds that wander from the point (level 2, sometimes 3).
DIGRESSIONS: list[str] = [
    "My favorite place to volunteer would be the zoo because I love animals, especially the monkeys.",
    "Last year I went to my aunts house for the summer and we went to the beach alot.",
    "Also the school lunches should be better, the pizza is always cold.",
    "I want to be a basketball player when I grow up so I need to practice.",
    "My friend says volunteer work is boring but he thinks everything is boring.",
    "Some people volunteer at the hospital but I dont like hospitals because they smell weird.",
    "I also think we should get more time between classes because the halls are crowded.",
    "My grandma volunteers at her church and she makes really good cookies.",
]

# Sentences that repeat the position without adding anything (levels 2-3).
REPEATS: dict[str, list[str]] = {
    "for": [
        "Volunteer work is good because it is good for people.",
        "That is why volunteer work is important.",
        "I really think it is a good idea.",
        "Volunteering is a very good thing to do.",
    ],
    "against": [
        "Volunteer work should not be required because it should not.",
        "That is why it is a bad idea.",
        "I really do not think it should be required.",
        "Making people do it is just wrong.",
    ],
}

# Score-1 essays, written whole: little response to the task, severe errors, at least five sentences.
WHOLE_1: list[str] = [
    (
        "dear principal i think volunter work is ok but i dont know. some people like it and some people "
        "dont like it its up to them. i like to play soccer after school and on saturdays we have games so i "
        "cant go. my coach says we have a good team this year we won 5 games. volunter work is like when you "
        "help people. i helped my mom clean the garage one time it took all day and there was a spider. so "
        "maybe yes maybe no. my friend jake says no. i dont really care either way it dont matter to me. "
        "soccer is my favorite sport and i want to go pro like my cousin who plays in college. thank you"
    ),
    (
        "Volunteer work. Volunteer work is work you dont get paid. Who would want to work and not get paid. "
        "My dad works at the factory and he gets paid every friday. He says money dont grow on trees. He has "
        "worked there for twenty years and his back hurts. I want to get a job at the mall when I am 16 so I "
        "can buy shoes. The shoes I want are 120 dollars and they are red and black. My mom wont buy them "
        "for me she says they are to expensive for shoes. So I need a job not volunteer. Jobs are better "
        "then volunteer because money. Also you can buy food with money. That is all I have to say about it "
        "i think."
    ),
    (
        "I think that students should do volunteer work becuase it is good and students should not do "
        "volunteer work because it is bad. It is good because you help and it is bad because you are tired. "
        "Also you could help animals. I have a dog named Biscuit he is a golden retreiver and he is 4 years "
        "old. He likes to chase squirrels and one time he got out and we found him at the park by the pond. "
        "My little sister was crying the whole time. Then we got him a new collar with a tag that has our "
        "phone number on it so it does not happen again. Animals are good. I like animals more then people "
        "sometimes. So volunteer work is good and bad at the same time. The end."
    ),
    (
        "dear principal. school is to long already we get out at 3 and then there is homework. why do we "
        "have to do more things. teachers give to much homework in every class and then you want volunteer "
        "to. i think school should start later because everyone is tired in first period. nobody learns "
        "anything in first period. i fall asleep in math alot and my teacher gets mad and moves my seat. "
        "also the buses are late every morning and the bus driver plays the radio to loud. volunter work "
        "would make it worse. we should have a longer lunch to and better food. the chicken is always dry. "
        "please fix the school first before you make us do things. from a student"
    ),
    (
        "Helping people is nice. I help people. I help my grandma carry her bags. I help my little brother "
        "with his shoes because he cant tie them yet he is five. I help my mom with dinner sometimes we make "
        "tacos on tuesday. We put cheese and lettuce and hot sauce on them but my brother only eats the "
        "cheese. Tacos are my favorite food. I also like pizza but not with pineapple because that is weird. "
        "My brother does not help at all he just watches cartoons. So I already help alot of people. I dont "
        "need to volunteer because I already do it at home every day. My grandma says I am a good helper. "
        "She gives me five dollars sometimes. I think thats it."
    ),
    (
        "In my opinion their should be volunteer. Because volunteer. It is good for the community and the "
        "community is good for the volunteer. The community is where we live. My community has a park and a "
        "store and a gas station and a church. It is open all night. The gas station sells slushies. I get a "
        "blue one every day after school if I have money. The red one is good to but blue is better. My "
        "community is pretty good but there is trash sometimes by the dumpster. One time I saw a raccoon in "
        "the dumpster and it looked at me like it was mad. Volunteer is good for trash. I think thats why. "
        "Thank you for your time principal."
    ),
    (
        "my opinion is no. because i said so and alot of kids agree with me. we had a vote in my class and "
        "everyone said no except maria. maria always wants to do extra stuff she is a teachers pet. i dont "
        "want to be like that. volunter is for old people who are retired and have time. we already have to "
        "go to school for like seven hours a day. kids should be kids. my uncle says high school is the best "
        "years of your life so we should have fun. not work for free. no no no. my mom says i have to do "
        "chores already so thats like volunteer at home. nobody pays me for that. thats my letter."
    ),
    (
        "Dear Mr principal I am writting this letter to you about the thing. The thing about the volunteer "
        "hours. I did not hear all of it in the annoucements because it was loud in homeroom. Someone was "
        "playing music on there phone. I think it was Tyler. Anyway I think it depends what it is. If it is "
        "fun then ok. If its picking up trash then no because thats gross and you could get cut. One time I "
        "cut my finger on a can and had to get stiches. It hurt really bad and there was blood on my shirt. "
        "The nurse said I was brave but I was not brave I was crying. Also my mom had to leave work to get "
        "me. So be careful. Thats all. Thank you."
    ),
    (
        "volunteer work is when you help people for free like at a hospital or a park or a school. there is "
        "lots of kinds. you can help animals or old people or kids. you can help in the summer or in the "
        "winter. in the winter you can shovel snow. last winter it snowed 2 feet and school was closed for "
        "three days it was the best. we made a snow fort and had a snowball fight with the kids next door. i "
        "won. then we had hot chocolate. my mom made us come in because our gloves were wet and our hands "
        "were red. so thats what volunteer work is. i hope it snows alot this year to. the end"
    ),
    (
        "I dont know if students should do it. Maybe some should. The smart ones could do it because they "
        "finish there work fast. Other kids need to study more like me. I am not good at english class and I "
        "have a D. My teacher says I need to write more and use details. So here are details. The school is "
        "big. It has three floors and a gym and a pool. We have to swim in gym class in the winter which is "
        "not fair because your hair is wet after. The pool is cold. The gym smells. The library has "
        "computers but they are slow. The lunch room is loud. I think thats enough details. Sorry if this is "
        "short."
    ),
    (
        "dear principal volunteer work should be required no it shouldnt. it depends. my mom says "
        "volunteering is good for you like vegetables. i dont like vegetables except corn. corn is good with "
        "butter and salt. if volunteer is like corn then ok. if its like broccoli then no way. my sister "
        "says volunteering is how she got into college but she is really smart and does everything. she has "
        "a whole folder of certificates. thats a joke. but for real i dont know. my friends dont know either "
        "we talked about it at lunch. i think i would rather do a job. maybe you should ask the teachers "
        "they know more then us. or ask the parents because they have to drive us there. ok bye."
    ),
    (
        "Students should do volunteer work. I think. Because it says so in the prompt. Volunteer work is "
        "good for people. People need help. Help is good. I would help at a store. I like the store by my "
        "house it has candy and chips and they know my name there. The man who works there is nice he gives "
        "me free gum sometimes when my mom is not looking. My cousin volunteers at a hospital and she has to "
        "wear a blue vest. She says it is boring but the nurses give her snacks. Is that volunteer? Maybe. I "
        "dont know. Anyway I think volunteer is ok for most people. I hope this is long enough because my "
        "hand hurts. Thank you for reading."
    ),
]
