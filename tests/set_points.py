"""The problem set's points, written out by hand for the grader's tests.

The set's problems are worth their difficulty in points: q1-q4 one star,
q5-q9 two, q10-q25 three. So the set is worth 4 x 1 + 5 x 2 + 16 x 3 = 62.
``tests/test_coursework_problems.py`` checks the problems' own modules
agree with this table.
"""

POINTS = {
    **dict.fromkeys(["q1", "q2", "q3", "q4"], 1),
    **dict.fromkeys(["q5", "q6", "q7", "q8", "q9"], 2),
    **dict.fromkeys([f"q{n}" for n in range(10, 26)], 3),
}
#: 4 x 1 + 5 x 2 + 16 x 3.
SET_POINTS = 62
