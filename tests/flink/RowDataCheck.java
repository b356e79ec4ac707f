// Writes RowData records and RowDataSerializer snapshots with Flink's own Table runtime, for
// tests/flink/test_flink_rowdata.py. Input (args[0]): one case per line, "TYPE<TAB>VALUE", TYPE a
// row type as LogicalType#asSerializableString, VALUE the row as space-separated tokens:
//   N null | BOOLEAN 1/0 | integers, DATE, TIME in decimal | FLOAT / DOUBLE raw bits in hex |
//   strings and bytes "x" + hex of the bytes | DECIMAL the unscaled value in decimal |
//   TIMESTAMP millis:nanosOfMilli | ROW "R" + row kind byte, then the fields |
//   ARRAY "A" + n, then n elements | MAP / MULTISET "M" + n, then n key value pairs.
// Output (args[1]): per case "FRESH<TAB>REUSED<TAB>SNAPSHOT<TAB>TYPE<TAB>SHARED<TAB>SUMMARY" (hex; FRESH by a
// new RowDataSerializer, REUSED by one serializer kept per type across the cases, SNAPSHOT the
// versioned snapshot as TypeSerializerSnapshot.writeVersionedSnapshot writes it, TYPE Flink's
// asSerializableString of the parsed type, SHARED the snapshot of the same type rebuilt with one
// object for all equal nested types, as hand-built Java types may share them; SUMMARY the type's
// asSummaryString), or
// "ERROR<TAB>message".

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericMapData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.MultisetType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.utils.LogicalTypeParser;
import org.apache.flink.types.RowKind;

public class RowDataCheck {

    private static String[] tokens;
    private static int at;

    static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (byte b : bytes) {
            sb.append(String.format("%02x", b));
        }
        return sb.toString();
    }

    static byte[] unhex(String token) {
        String h = token.substring(1);
        byte[] out = new byte[h.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    static Object value(LogicalType type) {
        String tok = tokens[at++];
        if (tok.equals("N")) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN: return tok.equals("1");
            case TINYINT: return Byte.parseByte(tok);
            case SMALLINT: return Short.parseShort(tok);
            case INTEGER: case DATE: case TIME_WITHOUT_TIME_ZONE: return Integer.parseInt(tok);
            case BIGINT: return Long.parseLong(tok);
            case FLOAT: return Float.intBitsToFloat(Integer.parseUnsignedInt(tok, 16));
            case DOUBLE: return Double.longBitsToDouble(Long.parseUnsignedLong(tok, 16));
            case CHAR: case VARCHAR: return StringData.fromBytes(unhex(tok));
            case BINARY: case VARBINARY: return unhex(tok);
            case DECIMAL: {
                DecimalType d = (DecimalType) type;
                DecimalData decimal = DecimalData.fromBigDecimal(
                        new BigDecimal(new BigInteger(tok), d.getScale()), d.getPrecision(), d.getScale());
                if (decimal == null) {
                    throw new IllegalArgumentException(tok + " does not fit " + type);
                }
                return decimal;
            }
            case TIMESTAMP_WITHOUT_TIME_ZONE: case TIMESTAMP_WITH_LOCAL_TIME_ZONE: {
                String[] parts = tok.split(":");
                return TimestampData.fromEpochMillis(Long.parseLong(parts[0]), Integer.parseInt(parts[1]));
            }
            case ARRAY: {
                int n = Integer.parseInt(tok.substring(1));
                Object[] items = new Object[n];
                for (int i = 0; i < n; i++) {
                    items[i] = value(((ArrayType) type).getElementType());
                }
                return new GenericArrayData(items);
            }
            case MAP: case MULTISET: {
                int n = Integer.parseInt(tok.substring(1));
                LogicalType keyType = type instanceof MapType
                        ? ((MapType) type).getKeyType() : ((MultisetType) type).getElementType();
                LogicalType valueType = type instanceof MapType
                        ? ((MapType) type).getValueType() : new IntType(false);
                Map<Object, Object> map = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    Object k = value(keyType);
                    map.put(k, value(valueType));
                }
                return new GenericMapData(map);
            }
            case ROW: {
                RowType row = (RowType) type;
                GenericRowData data = new GenericRowData(
                        RowKind.fromByteValue(Byte.parseByte(tok.substring(1))), row.getFieldCount());
                for (int i = 0; i < row.getFieldCount(); i++) {
                    data.setField(i, value(row.getTypeAt(i)));
                }
                return data;
            }
            default:
                throw new IllegalArgumentException("no value syntax for " + type);
        }
    }

    /** ``type`` rebuilt with one object for all equal nested types (``seen``: the first of each). */
    static LogicalType shared(LogicalType type, Map<LogicalType, LogicalType> seen) {
        LogicalType rebuilt = type;
        switch (type.getTypeRoot()) {
            case ARRAY:
                rebuilt = new ArrayType(type.isNullable(), shared(((ArrayType) type).getElementType(), seen));
                break;
            case MULTISET:
                rebuilt = new MultisetType(type.isNullable(), shared(((MultisetType) type).getElementType(), seen));
                break;
            case MAP:
                MapType map = (MapType) type;
                rebuilt = new MapType(type.isNullable(), shared(map.getKeyType(), seen), shared(map.getValueType(), seen));
                break;
            case ROW:
                List<RowType.RowField> fields = new ArrayList<>();
                for (RowType.RowField field : ((RowType) type).getFields()) {
                    fields.add(new RowType.RowField(field.getName(), shared(field.getType(), seen),
                            field.getDescription().orElse(null)));
                }
                rebuilt = new RowType(type.isNullable(), fields);
                break;
            default:
                break;
        }
        return seen.computeIfAbsent(rebuilt, t -> t);
    }

    /** The row VALUE (the tokens of a case line) of row type ``type``. */
    static RowData parse(LogicalType type, String valueText) {
        tokens = valueText.split(" ");
        at = 0;
        RowData row = (RowData) value(type);
        if (at != tokens.length) {
            throw new IllegalArgumentException((tokens.length - at) + " tokens left over");
        }
        return row;
    }

    static byte[] bytes(RowDataSerializer serializer, RowData row) throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(64);
        serializer.serialize(row, out);
        return out.getCopyOfBuffer();
    }

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        Map<String, RowDataSerializer> reused = new HashMap<>();
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(args[1]), StandardCharsets.UTF_8))) {
            for (String line : lines) {
                try {
                    int tab = line.indexOf('\t');
                    String typeText = line.substring(0, tab);
                    RowType type = (RowType) LogicalTypeParser.parse(typeText, RowDataCheck.class.getClassLoader());
                    RowData row = parse(type, line.substring(tab + 1));
                    RowDataSerializer fresh = new RowDataSerializer(type);
                    RowDataSerializer kept = reused.computeIfAbsent(typeText, t -> new RowDataSerializer(type));
                    DataOutputSerializer snapshot = new DataOutputSerializer(64);
                    TypeSerializerSnapshot.writeVersionedSnapshot(snapshot, fresh.snapshotConfiguration());
                    DataOutputSerializer sharedSnapshot = new DataOutputSerializer(64);
                    TypeSerializerSnapshot.writeVersionedSnapshot(sharedSnapshot,
                            new RowDataSerializer((RowType) shared(type, new HashMap<>())).snapshotConfiguration());
                    out.println(hex(bytes(fresh, row)) + "\t" + hex(bytes(kept, row)) + "\t"
                            + hex(snapshot.getCopyOfBuffer()) + "\t" + type.asSerializableString() + "\t"
                            + hex(sharedSnapshot.getCopyOfBuffer()) + "\t" + type.asSummaryString());
                } catch (Exception e) {
                    out.println("ERROR\t" + e.toString().replace('\n', ' ').replace('\t', ' '));
                }
            }
        }
    }
}
