-- Composite and generated signals: a for-generate of four shift-register stages (each a
-- nested entity instance), an array of byte vectors, an array of records, a VHDL-2008
-- record with an unbounded vector field constrained by the signal's subtype, a bit_vector,
-- a time signal (a physical type) and a ranged integer; 12.5 ns clock, run for 250 ns.
library ieee;
use ieee.std_logic_1164.all;

package nested_types is
  type word_array is array (natural range <>) of std_logic_vector(7 downto 0);
  type pair_t is record
    hi : std_logic;
    lo : std_logic_vector(1 downto 0);
  end record;
  type pairs_t is array (0 to 1) of pair_t;
  type frame_t is record
    payload : std_logic_vector;  -- unbounded: the signal's subtype gives the width
    last : boolean;
  end record;
end package;

library ieee;
use ieee.std_logic_1164.all;

entity stage is
  port (clk, d : in std_logic; q : out std_logic);
end entity;

architecture rtl of stage is
begin
  q <= d when rising_edge(clk);
end architecture;

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.nested_types.all;

entity nested_tb is
end entity;

architecture sim of nested_tb is
  signal clk : std_logic := '0';
  signal taps : std_logic_vector(0 to 4) := "10000";
  signal words : word_array(0 to 2) := (others => (others => '0'));
  signal pairs : pairs_t := (others => (hi => '0', lo => "00"));
  signal frame : frame_t(payload(3 downto 0)) := (payload => "0000", last => false);
  signal bits : bit_vector(2 downto 0) := "000";
  signal stamp : time := 0 ns;
  signal level : integer range -8 to 7 := -8;
begin
  clk <= not clk after 6.25 ns when now < 250 ns;
  chain : for i in 0 to 3 generate
    s : entity work.stage port map (clk => clk, d => taps(i), q => taps(i + 1));
  end generate;
  process (clk)
    variable n : natural := 0;
  begin
    if rising_edge(clk) then
      n := n + 1;
      words(n mod 3) <= std_logic_vector(to_unsigned(n, 8));
      pairs(n mod 2).hi <= not pairs(n mod 2).hi;
      pairs(n mod 2).lo <= std_logic_vector(to_unsigned(n mod 4, 2));
      frame.payload <= std_logic_vector(to_unsigned(n mod 16, 4));
      frame.last <= (n mod 4) = 3;
      bits <= bits(1 downto 0) & not bits(2);
      stamp <= now;
      if level = 7 then level <= -8; else level <= level + 1; end if;
    end if;
  end process;
end architecture;
