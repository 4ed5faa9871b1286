/* Column values that _fastpath.pyx builds from their bytes in place, with the
 * result of the driver's own deserializer for the same bytes.
 *
 * Declared for Cython in fastpath_values.pxd.
 */
#ifndef PF_FASTPATH_VALUES_H
#define PF_FASTPATH_VALUES_H

#include <Python.h>
#include <math.h>
#include <stdint.h>

/* uuid.UUID(bytes=p[:16]) without running UUID.__init__: the same two slots, set the same way. */
static PyObject *pf_uuid_from_16(PyObject *uuid_type, PyObject *int_name, PyObject *is_safe_name,
                                 PyObject *is_safe, const char *p) {
    PyObject *value, *u = ((PyTypeObject *)uuid_type)->tp_alloc((PyTypeObject *)uuid_type, 0);
    if (u == NULL) return NULL;
    value = _PyLong_FromByteArray((const unsigned char *)p, 16, 0, 0);
    if (value == NULL || PyObject_GenericSetAttr(u, int_name, value) < 0
            || PyObject_GenericSetAttr(u, is_safe_name, is_safe) < 0) {
        Py_XDECREF(value);
        Py_DECREF(u);
        return NULL;
    }
    Py_DECREF(value);
    return u;
}

/* The driver's timestamp (DesDateType): datetime(1970, 1, 1) + timedelta(days, seconds, us), where
   the three come from the milliseconds through a double, rounding as the driver does. Here the
   same three numbers, then the date by exact integer arithmetic. Returns 0 and the fields when
   the result lies in years 1..9999; -1 (the caller uses the driver's deserializer) otherwise. */
static int pf_timestamp_fields(int64_t ms, int *ymd_hms_us) {
    double timestamp, tmp, micros_left;
    int days, seconds, microseconds, x_odd;
    int64_t total_us, day, us_of_day, z, era, doe, yoe, y, doy, mp;
    /* ms of 0001-01-01 .. 9999-12-31 23:59:59.999, with a day's margin both ways for the rounding */
    if (ms < -62135596800000LL + 86400000LL || ms > 253402300799999LL - 86400000LL) return -1;
    timestamp = (double)ms / 1000.0;
    days = (int)(timestamp / 86400);
    seconds = (int)(timestamp - (double)((int64_t)days * 86400));
    micros_left = modf(timestamp, &tmp) * 1000000.;
    micros_left = modf(micros_left, &tmp);
    microseconds = (int)tmp;
    tmp = round(micros_left);
    if (fabs(tmp - micros_left) == 0.5) {
        x_odd = microseconds & 1;
        tmp = 2.0 * round((micros_left + x_odd) * 0.5) - x_odd;
    }
    microseconds += (int)tmp;
    total_us = ((int64_t)days * 86400 + seconds) * 1000000 + microseconds;
    day = total_us / 86400000000LL;
    us_of_day = total_us % 86400000000LL;
    if (us_of_day < 0) { us_of_day += 86400000000LL; day -= 1; }
    /* civil date of a day count from 1970-01-01 (proleptic Gregorian) */
    z = day + 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = yoe + era * 400;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    ymd_hms_us[2] = (int)(doy - (153 * mp + 2) / 5 + 1);
    ymd_hms_us[1] = (int)(mp < 10 ? mp + 3 : mp - 9);
    ymd_hms_us[0] = (int)(y + (ymd_hms_us[1] <= 2));
    if (ymd_hms_us[0] < 1 || ymd_hms_us[0] > 9999) return -1;
    ymd_hms_us[3] = (int)(us_of_day / 3600000000LL);
    ymd_hms_us[4] = (int)(us_of_day / 60000000LL % 60);
    ymd_hms_us[5] = (int)(us_of_day / 1000000LL % 60);
    ymd_hms_us[6] = (int)(us_of_day % 1000000LL);
    return 0;
}

#endif  /* PF_FASTPATH_VALUES_H */
