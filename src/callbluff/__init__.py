"""callbluff: call the bluff of NLP systems that grade or answer.

Black-box adversarial evaluation of automatic scorers (essay and short-answer) and question-answering
systems, faithful to Kumar et al. 2020, Ding et al. 2020, Jia & Liang 2017 and DPAEG.
See DESIGN.md for the data flow: records -> attacks -> targets -> metrics -> run directory.
"""

__version__ = "0.1.0"
