"""Numbers of scenario files (SSD attributes, .ssv values, unit definitions, .ssm transformations) are read
by their XML Schema lexical forms in bounded time and range, with errors naming what was read; a parameter
given twice in one parameter set is refused."""
import json
import math
import re
import shutil
import struct
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import rebind
from hypothesis import example, given
from hypothesis import strategies as st

from mechfmu.ssp.scenario import ScenarioError, load_scenario
from mechfmu.ssp.xsd_numbers import exact_decimal, read_boolean, read_double, read_integer

ROOT = Path(__file__).resolve().parent.parent
SSV = "http://ssp-standard.org/SSP1/SystemStructureParameterValues"
SSC = "http://ssp-standard.org/SSP1/SystemStructureCommon"
SSM = "http://ssp-standard.org/SSP1/SystemStructureParameterMapping"
MASS_INLINE = '<ssv:Parameter name="m"><ssv:Real value="5.0"/></ssv:Parameter>'
#: the xs:double lexical space as XML Schema states it, written independently of mechfmu.ssp.xsd_numbers
XSD_DOUBLE = r"(\+|-)?([0-9]+(\.[0-9]*)?|\.[0-9]+)([Ee](\+|-)?[0-9]+)?|(\+|-)?INF|NaN"
HUGE = "1e999999999"


def bits(value: float) -> bytes:
    return struct.pack("<d", value)


def oscillator(tmp_path: Path, mass_parameters: str = MASS_INLINE, units: str = "", files: dict | None = None,
               edit=lambda text: text) -> Path:
    """scenarios/oscillator copied, the mass's inline ``m`` replaced by ``mass_parameters`` (with ssv:Units)."""
    folder = tmp_path / "oscillator"
    shutil.copytree(ROOT / "scenarios" / "oscillator", folder)
    ssd = folder / "SystemStructure.ssd"
    text = ssd.read_text()
    assert MASS_INLINE in text
    text = text.replace(MASS_INLINE, mass_parameters)
    if units:
        text = text.replace("</ssv:Parameters>", f"</ssv:Parameters><ssv:Units>{units}</ssv:Units>", 3)
    ssd.write_text(edit(text))
    for name, content in (files or {}).items():
        (folder / name).write_text(content)
    return folder


def problems(folder: Path) -> str:
    with pytest.raises(ScenarioError) as info:
        load_scenario(folder, local=True)
    return str(info.value)


def mass_m(folder: Path) -> float:
    return load_scenario(folder, local=True).components["mass"].parameters["m"]


def real(value: str, unit: str = "") -> str:
    return f'<ssv:Parameter name="m"><ssv:Real value="{value}"{f" unit={unit!r}" if unit else ""}/></ssv:Parameter>'


GRAM = '<ssc:Unit name="g"><ssc:BaseUnit kg="1" factor="0.001"/></ssc:Unit>'
MAPPING = (f'<ssm:ParameterMapping xmlns:ssm="{SSM}" xmlns:ssc="{SSC}" version="1.0">'
           '<ssm:MappingEntry source="mass_g" target="m"><ssc:LinearTransformation {attributes}/>'
           '</ssm:MappingEntry></ssm:ParameterMapping>')
MASS_SSV = (f'<ssv:ParameterSet xmlns:ssv="{SSV}" version="1.0" name="set"><ssv:Parameters>'
            '<ssv:Parameter name="mass_g"><ssv:Real value="{value}"/></ssv:Parameter>'
            '<ssv:Parameter name="f_drive"><ssv:Real value="1.0"/></ssv:Parameter></ssv:Parameters></ssv:ParameterSet>')


def mapped(tmp_path: Path, attributes: str, value: str = "5000") -> Path:
    folder = oscillator(tmp_path, files={"mass.ssv": MASS_SSV.format(value=value),
                                         "mass.ssm": MAPPING.format(attributes=attributes)})
    rebind(folder / "SystemStructure.ssd", "mass",
           '<ssd:ParameterBinding source="mass.ssv"><ssd:ParameterMapping source="mass.ssm"/></ssd:ParameterBinding>')
    return folder


HANGING = {  # each of these built a gigantic exact integer and never finished
    "ssv value with a unit": dict(mass_parameters=real(HUGE, "g"), units=GRAM),
    "unit factor": dict(mass_parameters=real("5", "g"),
                        units=f'<ssc:Unit name="g"><ssc:BaseUnit kg="1" factor="{HUGE}"/></ssc:Unit>'),
    "unit offset": dict(mass_parameters=real("5", "g"),
                        units=f'<ssc:Unit name="g"><ssc:BaseUnit kg="1" offset="-{HUGE}"/></ssc:Unit>'),
}
HANGING_FRAGMENTS = {
    "ssv value with a unit": f"mass: parameter m = '{HUGE}' g: beyond the range of a double",
    "unit factor": f"unit 'g': BaseUnit factor = '{HUGE}' is not a decimal number (beyond the range of a double",
    "unit offset": f"unit 'g': BaseUnit offset = '-{HUGE}' is not a decimal number (beyond the range of a double",
    "transformation factor": f"parameter mapping of 'mass_g': LinearTransformation factor = '{HUGE}': beyond",
    "transformation offset": f"parameter mapping of 'mass_g': LinearTransformation offset = '{HUGE}': beyond",
    "transformed value": f"mass: parameter m = '{HUGE}': beyond the range of a double",
}


def test_huge_exponents_are_refused_within_a_second_each(tmp_path):
    """Run in a child process with a deadline: the old reading never returned."""
    folders = {name: oscillator(tmp_path / name.replace(" ", "_"), **kwargs) for name, kwargs in HANGING.items()}
    folders["transformation factor"] = mapped(tmp_path / "tf", f'factor="{HUGE}"')
    folders["transformation offset"] = mapped(tmp_path / "to", f'offset="{HUGE}"')
    folders["transformed value"] = mapped(tmp_path / "tv", 'factor="0.001"', value=HUGE)
    script = textwrap.dedent("""
        import json, sys, time
        from mechfmu.ssp.scenario import ScenarioError, load_scenario
        out = {}
        for name, folder in json.loads(sys.argv[1]).items():
            start = time.perf_counter()
            try:
                load_scenario(folder, local=True)
                message = "loaded"
            except ScenarioError as exc:
                message = str(exc)
            out[name] = [time.perf_counter() - start, message]
        print(json.dumps(out))
    """)
    run = subprocess.run([sys.executable, "-c", script, json.dumps({k: str(v) for k, v in folders.items()})],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    results = json.loads(run.stdout)
    for name, fragment in HANGING_FRAGMENTS.items():
        seconds, message = results[name]
        assert seconds < 1.0, (name, seconds)
        assert fragment in message, (name, message)


@pytest.mark.parametrize("value, unit, fragment", [
    ("1e400", "g", "mass: parameter m = '1e400' g: beyond the range of a double (about ±1.8e308)"),
    ("1e400", "", "mass: parameter m = '1e400': not a Real (beyond the range of a double"),
    ("-1e309", "", "mass: parameter m = '-1e309': not a Real (beyond the range of a double"),
    ("1e306", "t", "mass: parameter m = '1e306' t: the value in 'kg' is beyond the range of a double"),
])
def test_values_beyond_the_double_range_are_named(tmp_path, value, unit, fragment):
    units = GRAM + '<ssc:Unit name="t"><ssc:BaseUnit kg="1" factor="1000"/></ssc:Unit>'
    message = problems(oscillator(tmp_path, real(value, unit), units=units))
    assert fragment in message, message


@pytest.mark.parametrize("value", ["1_000", "infinity", "inf", "nan", "Infinity", "+nan", "\u0663", "1\u00a0",
                                   "1e", "e5", ".", "0x10", "1.5f", "1 0", "", "--1", "1e+-2", "\u0661.5"])
def test_reals_outside_the_xsd_double_forms_are_refused(tmp_path, value):
    message = problems(oscillator(tmp_path, real(value)))
    assert f"mass: parameter m = {value!r}: not a Real (not an xs:double" in message, message


@pytest.mark.parametrize("value, expected", [
    (" 7.5 ", 7.5), ("\t\n7.5\r\n", 7.5), ("+7.5", 7.5), ("7.", 7.0), (".75E1", 7.5), ("750e-2", 7.5),
    ("0.0075e+3", 7.5), ("00007.50000", 7.5),
])
def test_xsd_double_forms_are_read_as_float_reads_them(tmp_path, value, expected):
    assert bits(mass_m(oscillator(tmp_path, real(value)))) == bits(expected)


def test_units_stay_exact_and_tiny_values_underflow(tmp_path):
    units = GRAM + '<ssc:Unit name="mg"><ssc:BaseUnit kg="1" factor="1e-6"/></ssc:Unit>'
    assert bits(mass_m(oscillator(tmp_path / "g", real("5000", "g"), units=units))) == bits(5.0)
    assert bits(mass_m(oscillator(tmp_path / "mg", real("5e6", "mg"), units=units))) == bits(5.0)
    assert mass_m(oscillator(tmp_path / "x", real("3", "g"), units=units)) == float(Fraction(3, 1000))
    # a value below the smallest double underflows to 0.0, and -0 keeps its sign: the mass's exclusive bound says
    # which value it got
    assert "parameter m = 0 is out of range (0, inf] kg" in problems(oscillator(tmp_path / "u", real("1e-999999999")))
    assert "parameter m = -0 is out of range (0, inf] kg" in problems(oscillator(tmp_path / "n", real("-0")))
    assert mass_m(oscillator(tmp_path / "big", real("1e307", "g"), units=units)) == 1e304


@pytest.mark.parametrize("attribute, value, fragment", [
    ("stopTime", "1_0", "DefaultExperiment stopTime = '1_0' is not a finite number (not an xs:double"),
    ("stopTime", HUGE, f"DefaultExperiment stopTime = '{HUGE}' is not a finite number (beyond the range"),
    ("stopTime", "\u0662", "DefaultExperiment stopTime = '\u0662' is not a finite number (not an xs:double"),
    ("stopTime", "INF", "DefaultExperiment stopTime = 'INF' is not a finite number"),
    ("baseStepSize", "infinity", "FixedStepAlgorithm baseStepSize = 'infinity' is not a finite number (not an"),
])
def test_experiment_numbers_are_xsd_doubles(tmp_path, attribute, value, fragment):
    old = 'stopTime="1.0"' if attribute == "stopTime" else 'baseStepSize="0.0001"'
    folder = oscillator(tmp_path, edit=lambda text: text.replace(old, f'{attribute}="{value}"'))
    message = problems(folder)
    assert fragment in message, message


def test_experiment_numbers_with_surrounding_whitespace_are_read(tmp_path):
    folder = oscillator(tmp_path, edit=lambda text: text.replace('stopTime="1.0"', 'stopTime=" 2.5 "'))
    assert load_scenario(folder, local=True).stop_time == 2.5


@pytest.mark.parametrize("parameter, fragment", [
    ('<ssv:Parameter name="itemNumber"><ssv:Integer value="1_0"/></ssv:Parameter>',
     "spring: parameter itemNumber = '1_0': not an Integer (not an xs:integer"),
    ('<ssv:Parameter name="itemNumber"><ssv:Integer value="\u0663"/></ssv:Parameter>',
     "spring: parameter itemNumber = '\u0663': not an Integer (not an xs:integer"),
    (f'<ssv:Parameter name="itemNumber"><ssv:Integer value="{"9" * 5000}"/></ssv:Parameter>',
     "not an Integer (more than 30 digits)"),
    ('<ssv:Parameter name="itemNumber"><ssv:Integer value="4294967296"/></ssv:Parameter>',
     "spring: parameter itemNumber = '4294967296': not an Integer (does not fit an FMI Integer"),
    ('<ssv:Parameter name="activeConnector"><ssv:Boolean value="True"/></ssv:Parameter>',
     "spring: parameter activeConnector = 'True': 'True' is not a Boolean (true, false, 1 or 0)"),
])
def test_integers_and_booleans_are_xsd_forms(tmp_path, parameter, fragment):
    folder = oscillator(tmp_path, edit=lambda text: text.replace(
        '<ssv:Parameter name="stiffness">', parameter + '<ssv:Parameter name="stiffness">'))
    message = problems(folder)
    assert fragment in message, message


def test_integer_and_boolean_forms_with_whitespace_are_read(tmp_path):
    extra = ('<ssv:Parameter name="itemNumber"><ssv:Integer value=" +0003 "/></ssv:Parameter>'
             '<ssv:Parameter name="activeConnector"><ssv:Boolean value=" 0 "/></ssv:Parameter>')
    folder = oscillator(tmp_path, edit=lambda text: text.replace(
        '<ssv:Parameter name="stiffness">', extra + '<ssv:Parameter name="stiffness">'))
    parameters = load_scenario(folder, local=True).components["spring"].parameters
    assert (parameters["itemNumber"], parameters["activeConnector"]) == (3, False)


@pytest.mark.parametrize("attribute, fragment", [
    ('kg="1_0"', "unit 'g': BaseUnit kg = '1_0' is not an integer exponent (not an xs:integer"),
    ('kg="1" factor="1e-3x"', "unit 'g': BaseUnit factor = '1e-3x' is not a decimal number (not an xs:double"),
    ('kg="1" factor="INF"', "unit 'g': BaseUnit factor = 'INF' is not a decimal number (INF is not a finite"),
    ('kg="1" factor="0"', "unit 'g': BaseUnit factor = '0' is zero as a double; give a nonzero factor"),
    ('kg="1" factor="-1e-400"', "unit 'g': BaseUnit factor = '-1e-400' is zero as a double; give a nonzero"),
])
def test_unit_definitions_are_xsd_numbers(tmp_path, attribute, fragment):
    folder = oscillator(tmp_path, real("5", "g"), units=f'<ssc:Unit name="g"><ssc:BaseUnit {attribute}/></ssc:Unit>')
    message = problems(folder)
    assert fragment in message, message


def test_a_parameter_given_twice_in_one_set_is_refused(tmp_path):
    inline = oscillator(tmp_path / "inline", real("5.0") + real("6.0"))
    message = problems(inline)
    assert "mass: parameter binding (inline): parameter 'm' is given twice in one parameter set" in message, message
    external = mapped(tmp_path / "external", 'factor="0.001"')
    (external / "mass.ssv").write_text(MASS_SSV.format(value="5000").replace(
        "</ssv:Parameters>", '<ssv:Parameter name="mass_g"><ssv:Real value="6000"/></ssv:Parameter></ssv:Parameters>'))
    message = problems(external)
    assert "mass: parameter binding mass.ssv: parameter 'mass_g' is given twice in one parameter set" in message


def test_a_linear_transformation_stays_exact(tmp_path):
    assert bits(mass_m(mapped(tmp_path, 'factor="0.001"'))) == bits(5.0)


# --- the reader itself --------------------------------------------------------------------------------

@given(st.floats(allow_nan=False))
def test_every_float_repr_reads_back_bit_for_bit(value):
    text = repr(value).replace("inf", "INF")
    assert bits(read_double(text)) == bits(value)
    if math.isfinite(value):
        assert exact_decimal(repr(value)) == Fraction(repr(value))
        assert float(exact_decimal(repr(value))) == value


exponents = st.integers(-1200, 1200).map(str) | st.from_regex(r"[+-]?0*[0-9]{1,12}", fullmatch=True)
forms = st.builds(lambda sign, whole, point, frac, e, exponent, space: (
    space + sign + (whole + (point + frac if point else "") if whole or not frac else "." + frac)
    + (e + exponent if e else "") + space),
    st.sampled_from(["", "+", "-"]), st.from_regex(r"[0-9]{0,30}", fullmatch=True), st.sampled_from(["", "."]),
    st.from_regex(r"[0-9]{0,30}", fullmatch=True), st.sampled_from(["", "e", "E"]), exponents,
    st.sampled_from(["", " ", "\t", "\n "]))


@given(forms)
def test_valid_lexical_forms_agree_with_float(text):
    if not re.fullmatch(XSD_DOUBLE, text.strip(" \t\n\r")):
        with pytest.raises(ValueError, match="not an xs:double"):
            read_double(text)
        return
    expected = float(text)
    if math.isinf(expected):
        with pytest.raises(ValueError, match="beyond the range of a double"):
            read_double(text)
        with pytest.raises(ValueError, match="beyond the range of a double"):
            exact_decimal(text)
        return
    assert bits(read_double(text)) == bits(expected)
    assert float(exact_decimal(text)) == expected  # float() of a Fraction rounds correctly, as float() of text


def float_accepts(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@given(st.text(alphabet="0123456789_.eE+-infatyINFA \u00a0\u2003\u0663\uff11", min_size=1, max_size=10)
       .filter(float_accepts))
@example("1E310")
def test_texts_float_accepts_are_read_only_in_the_schema_forms(text):
    """A schema form is the double float() gives, except a finite text beyond the double range (float gives
    infinity): refused as too large."""
    stripped = text.strip(" \t\n\r")
    if re.fullmatch(XSD_DOUBLE, stripped) and math.isinf(float(text)) and "INF" not in stripped:
        with pytest.raises(ValueError, match="beyond the range of a double"):
            read_double(text)
    elif re.fullmatch(XSD_DOUBLE, stripped):
        assert bits(read_double(text)) == bits(float(text))
    else:
        with pytest.raises(ValueError, match="not an xs:double"):
            read_double(text)


def test_exact_decimal_is_exact_and_bounded():
    assert exact_decimal("0.1") == Fraction(1, 10)
    assert exact_decimal("-12.5e-1") == Fraction(-5, 4)
    assert exact_decimal("0e999999999") == 0
    assert exact_decimal("1e-1001") == 0 and exact_decimal("1e-999") == Fraction(1, 10**999)
    with pytest.raises(ValueError, match="more than 1000 significant digits"):
        read_double("1." + "1" * 1000)
    assert read_double("1." + "1" * 999) == float("1." + "1" * 999)
    assert read_double("1" + "0" * 300 + ".000") == 1e300
    with pytest.raises(ValueError, match="beyond the range"):
        read_double("1.7976931348623159e308")  # float() rounds it to inf
    assert read_double("1.7976931348623158e308") == sys.float_info.max  # float() rounds it down
    assert exact_decimal("1.7976931348623158e308") > Fraction(sys.float_info.max)


def test_integers_and_booleans():
    assert read_integer(" -0042\n") == -42
    for text in ("1_0", "1.0", "\u0663", "", "+", "1e3", "9" * 31):
        with pytest.raises(ValueError):
            read_integer(text)
    assert [read_boolean(t) for t in ("true", " false ", "1", "0")] == [True, False, True, False]
    for text in ("True", "FALSE", "yes", "01", ""):
        with pytest.raises(ValueError, match="true, false, 1 or 0"):
            read_boolean(text)
